import type { KubeObject } from "@tessera/client";
import { timeoutScope, toError, withFields, type Clock, type Logger } from "@tessera/core";
import type { AdmissionRequest, AdmissionResponse } from "./admission-review.js";
import type { AdmissionResult } from "./admission-result.js";
import type {
  AdmissionContext,
  AdmissionWebhookPlugin,
  ValidationOutcome,
} from "./admission-webhook-plugin.js";
import { jsonPatchDiff } from "./json-patch-diff.js";
import type { AdmissionOperation, AdmissionWebhookDefinition } from "./webhook-definition.js";

/** Options of an {@link AdmissionHandler}. */
export interface AdmissionHandlerOptions {
  readonly plugin: AdmissionWebhookPlugin<KubeObject>;
  readonly definition: AdmissionWebhookDefinition;
  /** Which of the plugin's webhooks this serves. */
  readonly type: "mutate" | "validate";
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * The handler's deadline for a webhook whose API server timeout is
 * `timeoutSeconds`: a second less (a fifth less below five seconds), so
 * that the answer (a refusal, or an allowance under `Ignore`) reaches the
 * API server before it gives up on the call and reports a bare timeout.
 */
export function handlerDeadlineMs(timeoutSeconds: number): number {
  const ms = timeoutSeconds * 1000;
  return ms - Math.min(1000, ms / 5);
}

/**
 * Answers the AdmissionRequests of one webhook of a plugin: calls
 * `default()` (and sends the JSON patch from the object given to the one
 * returned) or the `validate*()` of the operation, within
 * {@link handlerDeadlineMs}. A method that throws or misses the deadline
 * is answered by the webhook's failure policy, as the API server answers an
 * unreachable webhook: `Fail` refuses the request with a message that says
 * what happened (500 for a throw, 504 for the deadline), `Ignore` allows it
 * unchanged; either way it is logged.
 */
export class AdmissionHandler {
  /** The path it serves, the `webhook` label of its metrics. */
  readonly path: string;
  private readonly deadlineMs: number;

  constructor(private readonly options: AdmissionHandlerOptions) {
    const { definition, type } = options;
    const path = type === "mutate" ? definition.mutatingPath : definition.validatingPath;
    if (path === undefined) throw new TypeError(`the webhook of ${definition.for.kind} has no ${type} path`);
    this.path = path;
    this.deadlineMs = handlerDeadlineMs(definition.timeoutSeconds);
  }

  /** The response to `request`; never rejects. */
  async review(request: AdmissionRequest, signal: AbortSignal): Promise<AdmissionResponse> {
    const { clock, definition } = this.options;
    const operation = request.operation;
    if (operation === "CONNECT") return { uid: request.uid, allowed: true };
    const logger = withFields(this.options.logger, {
      webhook: this.path,
      operation,
      uid: request.uid,
      ...(request.namespace ? { namespace: request.namespace } : {}),
      ...(request.name ? { name: request.name } : {}),
    });
    const scope = timeoutScope(clock, this.deadlineMs, `webhook ${this.path}`, [signal]);
    const ctx: AdmissionContext = {
      signal: scope.signal,
      operation,
      dryRun: request.dryRun === true,
      userInfo: request.userInfo,
      logger,
      request,
    };
    const aborted = new Promise<never>((_, reject) => {
      if (scope.signal.aborted) reject(toError(scope.signal.reason));
      scope.signal.addEventListener("abort", () => reject(toError(scope.signal.reason)), { once: true });
    });
    aborted.catch(() => {}); // settled by the race below, or never looked at
    try {
      const work =
        this.options.type === "mutate" ? this.mutate(request, ctx) : this.validate(request, operation, ctx);
      return await Promise.race([work, aborted]);
    } catch (error) {
      const timedOut = scope.timedOut;
      const why = timedOut
        ? `did not answer within ${this.deadlineMs} ms (the deadline within its timeoutSeconds, ${definition.timeoutSeconds})`
        : `failed: ${toError(error).message}`;
      if (definition.failurePolicy === "Ignore") {
        logger.error(`webhook ${this.path} ${why}; allowed, as its failurePolicy is Ignore`, { error });
        return { uid: request.uid, allowed: true };
      }
      logger.error(`webhook ${this.path} ${why}; refused, as its failurePolicy is Fail`, { error });
      return {
        uid: request.uid,
        allowed: false,
        status: {
          code: timedOut ? 504 : 500,
          reason: timedOut ? "Timeout" : "InternalError",
          message: `the ${definition.for.kind} webhook ${why}`,
        },
      };
    } finally {
      scope.close();
    }
  }

  private async mutate(request: AdmissionRequest, ctx: AdmissionContext): Promise<AdmissionResponse> {
    const { plugin } = this.options;
    const object = request.object;
    if (!plugin.default || !object || (request.operation !== "CREATE" && request.operation !== "UPDATE")) {
      return { uid: request.uid, allowed: true };
    }
    const copy = structuredClone(object);
    const returned = await plugin.default(copy, ctx);
    // Through JSON, as the API server will store it: Dates become strings, undefined fields vanish.
    const defaulted = JSON.parse(JSON.stringify(returned ?? copy)) as unknown;
    const patch = jsonPatchDiff(object, defaulted);
    if (patch.length === 0) return { uid: request.uid, allowed: true };
    return {
      uid: request.uid,
      allowed: true,
      patchType: "JSONPatch",
      patch: Buffer.from(JSON.stringify(patch)).toString("base64"),
    };
  }

  private async validate(
    request: AdmissionRequest,
    operation: AdmissionOperation,
    ctx: AdmissionContext,
  ): Promise<AdmissionResponse> {
    const { plugin } = this.options;
    const object = request.object ?? undefined;
    const old = request.oldObject ?? undefined;
    let outcome: ValidationOutcome = undefined;
    if (operation === "CREATE" && plugin.validateCreate && object) {
      outcome = await plugin.validateCreate(object, ctx);
    } else if (operation === "UPDATE" && plugin.validateUpdate && object && old) {
      outcome = await plugin.validateUpdate(object, old, ctx);
    } else if (operation === "DELETE" && plugin.validateDelete && old) {
      outcome = await plugin.validateDelete(old, ctx);
    }
    return responseOf(request.uid, outcome ?? undefined);
  }
}

/** The AdmissionResponse of a validation's result (nothing: allowed). */
function responseOf(uid: string, result: AdmissionResult | undefined): AdmissionResponse {
  if (result === undefined) return { uid, allowed: true };
  const warnings = result.warnings.length > 0 ? { warnings: result.warnings } : {};
  if (result.allowed) return { uid, allowed: true, ...warnings };
  return {
    uid,
    allowed: false,
    status: {
      code: result.code,
      reason: result.code === 422 ? "Invalid" : result.code === 403 ? "Forbidden" : "BadRequest",
      message: result.message,
      ...(result.causes.length > 0 ? { details: { causes: result.causes } } : {}),
    },
    ...warnings,
  };
}
