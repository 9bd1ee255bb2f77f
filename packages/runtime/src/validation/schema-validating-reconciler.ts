import type { Clock } from "@tessera/core";
import type { KubeObject, Resource, Client } from "@tessera/client";
import type { EventRecorder } from "../client/event-recorder.js";
import { setCondition, type Condition } from "../helpers/conditions.js";
import { applyStatusIfChanged } from "../helpers/status.js";
import type { Reconciler, ReconcileContext, ReconcileFunction } from "../reconcile/reconciler.js";
import { requestKey, type Request } from "../reconcile/request.js";
import type { Result } from "../reconcile/result.js";
import type { CrdSchemaValidator } from "./crd-schema-validator.js";

/** What {@link validatingReconciler} needs. */
export interface SchemaValidationOptions<T extends KubeObject> {
  resource: Resource<T>;
  /** The validator of the resource's CRD version, e.g. `validators.for(await client.get(CRDs, { name }), "v1")`. */
  validator: () => CrdSchemaValidator | Promise<CrdSchemaValidator>;
  /** Writes the `Valid` condition (server-side apply of the status subresource). */
  client: Client;
  events: EventRecorder;
  clock: Clock;
}

type WithConditions = KubeObject & {
  metadata?: KubeObject["metadata"] & { generation?: number };
  status?: { conditions?: Condition[] };
};

/**
 * Wraps a reconciler so it only sees objects valid against their CRD's
 * schema (opt-in). An invalid object gets a `Valid=False` condition whose
 * message lists every violation (path and problem), a Warning event
 * `SchemaViolation`, and no reconcile; a valid one gets `Valid=True` (written
 * only when it changed) and is reconciled. Useful where the API server cannot
 * enforce the schema: objects stored before the CRD tightened, or a schema
 * the operator ships that is stricter than the one installed.
 *
 * ```ts
 * const validators = new CrdSchemaValidators();
 * const crd = readCrdFile("config/crd/gadgets.yaml");
 * manager.controller().for(Gadgets).complete(
 *   validatingReconciler(reconcileGadget, {
 *     resource: Gadgets,
 *     validator: () => validators.for(crd, "v1"),
 *     client: manager.get(Tokens.ApiClient),
 *     events: manager.get(Tokens.EventRecorder),
 *     clock: manager.get(Tokens.Clock),
 *   }),
 * );
 * ```
 */
export function validatingReconciler<T extends KubeObject>(
  inner: Reconciler<T> | ReconcileFunction<T>,
  options: SchemaValidationOptions<T>,
): Reconciler<T> {
  const reconcile = typeof inner === "function" ? inner : inner.reconcile.bind(inner);
  return {
    async reconcile(request: Request, ctx: ReconcileContext<T>): Promise<Result> {
      const object = ctx.current();
      const withConditions: WithConditions | undefined = object;
      if (!object) return reconcile(request, ctx);
      const { valid, violations } = (await options.validator()).validate(object);
      const generation = withConditions?.metadata?.generation;
      const message = violations.map((v) => `${v.path}: ${v.message}`).join("; ");
      const { conditions } = setCondition(
        withConditions?.status?.conditions,
        valid
          ? {
              type: "Valid",
              status: "True",
              reason: "SchemaValid",
              ...(generation !== undefined ? { observedGeneration: generation } : {}),
            }
          : {
              type: "Valid",
              status: "False",
              reason: "SchemaViolation",
              message,
              ...(generation !== undefined ? { observedGeneration: generation } : {}),
            },
        options.clock.wallTime(),
      );
      const resource = options.resource as unknown as Resource<WithConditions>;
      await applyStatusIfChanged(
        options.client,
        resource,
        object,
        { conditions },
        { force: true, signal: ctx.signal },
      );
      if (!valid) {
        options.events.record(object, {
          type: "Warning",
          reason: "SchemaViolation",
          action: "Validate",
          note: message,
        });
        ctx.logger.warn("object breaks its schema; not reconciled", { key: requestKey(request), violations });
        return undefined;
      }
      return reconcile(request, ctx);
    },
  };
}
