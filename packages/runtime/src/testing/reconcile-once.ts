import { Container } from "inversify";
import { withFields, type Clock } from "@tessera/core";
import { CapturingLogger, FakeClock } from "@tessera/core/testing";
import { describeResource, type KubeObject, type Resource } from "@tessera/client";
import { isResource } from "../builder/kind.js";
import { PluginRegistry } from "../plugin/plugin-registry.js";
import type { PluginClass, ReconcilerPlugin } from "../plugin/plugin.js";
import type { Token } from "../plugin/tokens.js";
import type { Condition } from "../helpers/conditions.js";
import { ManagedFinalizer } from "../reconcile/managed-finalizer.js";
import type { ReconcileContext } from "../reconcile/reconciler.js";
import { CONTROLLER_OWNER_INDEX, controllerOwnerUid, RelatedObjects } from "../reconcile/related-objects.js";
import type { Request } from "../reconcile/request.js";
import type { Result } from "../reconcile/result.js";
import { CapturingEventRecorder, type RecordedEvent } from "./capturing-event-recorder.js";
import { FakeClient, type FakeClientOptions, type FakeWrite } from "./fake-client.js";
import { bindTestServices } from "./test-bindings.js";

/** Options of {@link reconcileOnce}. */
export interface ReconcileOnceOptions {
  /** Objects in the fake before the reconcile (each with its `apiVersion` and `kind`). */
  objects?: readonly KubeObject[];
  /** The custom resources the fake serves (the primary kind among them). */
  resources?: readonly Resource[];
  /** The fake to use instead of a new one (its store and writes carry over: for a second reconcile). */
  client?: FakeClient;
  /** Default a new `FakeClock`. */
  clock?: Clock;
  /** Default a new `CapturingLogger`. */
  logger?: CapturingLogger;
  /** Further bindings the reconciler injects (`[token, value]`), e.g. `[Tokens.Config, config]` or a token of your own. */
  provide?: readonly (readonly [Token<unknown>, unknown])[];
  /**
   * Indexes beyond those the reconciler's `controller(on)` declares (which
   * are declared on the fake for it), per kind: `[[Secrets, { "spec.owner": fn }]]`.
   */
  indexes?: FakeClientOptions["indexes"];
  /** The context's attempt; default 1. */
  attempt?: number;
  signal?: AbortSignal;
}

/** What one reconcile did. */
export interface ReconcileOnceOutcome {
  /** What `reconcile` (or `cleanup`, as a requeue) returned; absent when it threw. */
  result?: Result;
  /** What `reconcile` threw, if it did (the controller would retry with backoff). */
  error?: unknown;
  /** The writes of this reconcile (verb, kind, object), in order. */
  writes: FakeWrite[];
  /** The Events it recorded, in order. */
  events: RecordedEvent[];
  /** The primary object's `status.conditions` after the reconcile (absent when it has none, or is gone). */
  conditions?: Condition[];
  /** The fake, to read the objects as the reconcile left them. */
  client: FakeClient;
  logger: CapturingLogger;
}

/**
 * Builds `reconciler` as the manager does (a container in which the class's
 * `static inject` tokens resolve: the fake client for `Tokens.Client`,
 * `Tokens.ApiClient` and `Tokens.ApiReader`, the clock, a capturing logger
 * and event recorder, a no-op meter and tracer, and what `provide` adds),
 * reads its `controller(on)` for the primary kind and the indexes it
 * declares (kept by the fake as the manager's cache keeps them), and runs one reconcile
 * of `request` (with a declared `finalizer(name)`, as the controller does: the
 * finalizer added before `reconcile`, `cleanup` for an object being deleted,
 * the finalizer removed after it), and reports its result, writes, events and the primary's
 * conditions after it. `ctx.current()` answers the primary object as the fake held
 * it when the reconcile started, as a cache that has not yet seen the
 * reconcile's own writes. Tokens it does not bind (Config, KubeConfig,
 * InformerFactory, RestMapper, Metrics) fail with the manager's
 * `UnboundTokenError` unless given in `provide`. `ctx.owned` and
 * `ctx.related` read the fake, which keeps the owner index of every `owns`
 * kind as the manager's caches do.
 */
export async function reconcileOnce<P extends readonly unknown[]>(
  reconciler: PluginClass<ReconcilerPlugin<never>, [...P]>,
  request: Request,
  options: ReconcileOnceOptions = {},
): Promise<ReconcileOnceOutcome> {
  const clock = options.clock ?? new FakeClock();
  const logger = options.logger ?? new CapturingLogger();
  const client =
    options.client ??
    new FakeClient({ resources: options.resources ?? [], objects: options.objects ?? [], clock });
  if (options.client) for (const object of options.objects ?? []) client.seed(object);
  const recorder = new CapturingEventRecorder();
  const container = new Container();
  bindTestServices(container, {
    client,
    clock,
    logger,
    recorder,
    ...(options.provide ? { provide: options.provide } : {}),
  });
  const registry = new PluginRegistry(container);
  // As manager.register: the class is checked against its own constructor, then stored untyped.
  registry.addClass(reconciler as unknown as PluginClass<object, never[]>);
  registry.checkInjections();
  const [declaration] = registry.controllerDeclarations();
  if (!declaration) throw new TypeError(`${reconciler.name}: declares no controller`);
  const kind = declaration.definition.for;
  const primary = isResource(kind) ? kind : client.resourceFor(kind);
  if (!primary) {
    throw new TypeError(
      `reconcileOnce(${reconciler.name}): the fake serves no ${kind.group}/${kind.version} ${kind.kind}; give its handle in options.resources`,
    );
  }
  // The indexes the manager's cache would keep for this controller (the owner index of its owned
  // kinds among them), so its indexed reads, ctx.owned and ctx.related work here too.
  const owned: Resource[] = [];
  const declared: Resource[] = [primary];
  for (const { kind: watched, cache, map } of [
    { kind, cache: declaration.definition.cache, map: undefined },
    ...declaration.definition.watches,
  ]) {
    if (cache.indexes) client.declareIndexes(watched, cache.indexes);
    const resource = isResource(watched) ? watched : client.resourceFor(watched);
    if (map === undefined || resource === undefined) continue;
    declared.push(resource);
    if (map.type === "owner") {
      client.declareIndexes(resource, { [CONTROLLER_OWNER_INDEX]: controllerOwnerUid });
      owned.push(resource);
    }
  }
  const related = new RelatedObjects({
    controller: declaration.definition.name,
    reader: client,
    owned,
    declared,
  });
  for (const [indexed, indexes] of options.indexes ?? []) client.declareIndexes(indexed, indexes);
  // Past the interceptors: they are for the reconciler's own calls.
  const current = client.peek(primary, request);
  const attempt = options.attempt ?? 1;
  const ctx: ReconcileContext<KubeObject> = {
    signal: options.signal ?? new AbortController().signal,
    logger: withFields(logger, { controller: describeResource(primary), ...request, attempt }),
    attempt,
    current: () => current,
    owned: (ownedKind) => related.owned(ownedKind, current, ctx.signal),
    related: (relatedKind, index, value) => related.related(relatedKind, index, value, ctx.signal),
  };
  const before = client.writes.length;
  const outcome: ReconcileOnceOutcome = { writes: [], events: recorder.events, client, logger };
  const { reconciler: plugin, definition } = declaration;
  try {
    // As the controller runs it: with a managed finalizer, its add, the cleanup and its removal.
    outcome.result = definition.finalizer
      ? await new ManagedFinalizer({ name: definition.finalizer, resource: primary, client }).run(
          current,
          ctx,
          (object, c) => plugin.cleanup!(object, c),
          () => plugin.reconcile(request, ctx),
        )
      : await plugin.reconcile(request, ctx);
  } catch (error) {
    outcome.error = error;
  }
  outcome.writes = client.writes.slice(before);
  const after = client.peek(primary, request) as { status?: { conditions?: Condition[] } } | undefined;
  if (after?.status?.conditions) outcome.conditions = after.status.conditions;
  return outcome;
}
