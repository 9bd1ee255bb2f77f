import type { KubeObject } from "@tessera/client";
import type { MapToRequests } from "../handler/event-handler.js";
import type { Predicate } from "../predicate/predicate.js";
import type { Reconciler, ReconcileFunction } from "../reconcile/reconciler.js";
import {
  isTriggerSource,
  type TriggerDeclaration,
  type TriggerOptions,
  type TriggerSource,
} from "../reconcile/trigger-source.js";
import { BuilderError } from "./builder-error.js";
import { cacheOptionProblems, type CacheOptions, type IndexFunction } from "./cache-options.js";
import type { ControllerOptions } from "./controller-options.js";
import { describeKind, type Kind } from "./kind.js";
import { cleanupDeclarationProblems, finalizerNameProblems } from "./finalizer-declaration.js";

const CONTROLLER_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const MODES: ReadonlySet<string> = new Set(["leader", "sharded", "every-replica"]);

/** A secondary kind the controller watches, and how its events become requests. */
export interface WatchDeclaration {
  readonly kind: Kind;
  /**
   * `owns`: the controller owner of the primary kind (every owner of it with
   * `everyOwner`); `watches`: the given mapping.
   */
  readonly map:
    | { readonly type: "owner"; readonly everyOwner: boolean }
    | { readonly type: "mapped"; readonly toRequests: MapToRequests };
  readonly predicates: readonly Predicate[];
  /** What the manager caches of the kind for this watch. */
  readonly cache: Readonly<CacheOptions>;
}

/**
 * A permission the reconciler needs beyond what its kinds imply (an RBAC
 * PolicyRule): `tessera generate` adds it to the operator's ClusterRole.
 */
export interface PermissionRule {
  /** API groups; `""` for the core group. */
  readonly apiGroups: readonly string[];
  /** Resources, subresources as `plural/sub`, e.g. `["secrets"]`, `["pods/log"]`. */
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
}

/** A controller as declared: what the manager builds and runs. */
export interface ControllerDefinition<T extends KubeObject = KubeObject> {
  readonly name: string;
  readonly for: Kind<T>;
  readonly predicates: readonly Predicate<T>[];
  /** `for(kind, { statusUpdates })`: whether an update of only the primary's status reconciles it. */
  readonly statusUpdates: "ignore" | "reconcile";
  /** What the manager caches of the primary kind. */
  readonly cache: Readonly<CacheOptions>;
  readonly watches: readonly WatchDeclaration[];
  /** Sources of requests declared with {@link ControllerBuilder.triggers}. */
  readonly triggers: readonly TriggerDeclaration[];
  readonly options: Readonly<ControllerOptions>;
  /** Permissions declared with {@link ControllerBuilder.needs}. */
  readonly permissions: readonly PermissionRule[];
  /** The finalizer the runtime manages for the reconciler's `cleanup`, from {@link ControllerBuilder.finalizer}. */
  readonly finalizer?: string;
}

/** Options of `for`, `owns` and `watches`: what to cache of the kind (see {@link CacheOptions}), and which events count. */
export interface WatchOptions<T extends KubeObject> extends CacheOptions<T> {
  /** Events must pass every one of these (combine with `and`, `or`, `not`). */
  predicates?: readonly Predicate<T>[];
}

/** Options of `for`: those of {@link WatchOptions}, and whether status-only updates reconcile. */
export interface ForOptions<T extends KubeObject> extends WatchOptions<T> {
  /**
   * `"ignore"` (the default): an update that changed only the primary's
   * status (same generation, same labels, annotations, finalizers, owner
   * references and deletion timestamp) does not reconcile it, as JOSDK's
   * generation-aware default (controller-runtime reconciles every update).
   * Measured on the real API server (test/integration/status-updates.test.ts):
   * a controller that writes its status reconciled 50 Widgets through a
   * create and two spec changes 300 times reconciling status updates, 150
   * times ignoring them; the extra half are reconciles of the controller's
   * own status writes, which find nothing to do. Kinds without a generation
   * (a ConfigMap) see every update either way; resyncs (`maxIntervalMs`)
   * reconcile either way.
   *
   * `"reconcile"`: every update reconciles, for a controller that acts on a
   * status another writer sets.
   */
  statusUpdates?: "ignore" | "reconcile";
}

/** Options of `owns`: those of {@link WatchOptions}, and which owners a child wakes. */
export interface OwnsOptions<T extends KubeObject> extends WatchOptions<T> {
  /**
   * Wake every owner of the primary kind in the child's `ownerReferences`,
   * not only its controller owner (controller-runtime's `MatchEveryOwner`):
   * for children shared by several primaries. `ctx.owned` still finds
   * children by their controller owner. Default false.
   */
  everyOwner?: boolean;
}

/**
 * Declares a controller as a sentence, as controller-runtime's builder and
 * kube-rs's `Controller::new(..).owns(..)` do:
 *
 * ```ts
 * on.for(Widgets, { predicates: [generationChanged()] }).owns(ConfigMaps).withOptions({ concurrency: 4 });
 * ```
 *
 * Generation-aware by default: the primary watch ignores updates that
 * changed only the object's status, so a controller's own status write does
 * not reconcile it again (half of all reconciles of a controller that writes
 * status, measured; see {@link ForOptions.statusUpdates}). Label,
 * annotation, finalizer and deletion changes still reconcile, and every
 * object is reconciled at least every `maxIntervalMs` (10 h by default).
 * `for(kind, { statusUpdates: "reconcile" })` turns it off.
 *
 * Mistakes (no `for`, two `for`s, a bad name or option) are collected and
 * thrown together as one {@link BuilderError} when the declaration is
 * completed, never mid-chain.
 */
export class ControllerBuilder<T extends KubeObject = KubeObject> {
  private forKind: Kind<T> | undefined;
  private forPredicates: readonly Predicate<T>[] = [];
  private forStatusUpdates: "ignore" | "reconcile" = "ignore";
  /** Erased to KubeObject like the secondaries', so the builder stays assignable across its type parameter. */
  private forCache: CacheOptions = {};
  private readonly secondaries: WatchDeclaration[] = [];
  private readonly triggerSources: TriggerDeclaration[] = [];
  private options: ControllerOptions = {};
  private controllerName: string | undefined;
  private readonly permissions: PermissionRule[] = [];
  private finalizerName: string | undefined;
  private readonly problems: string[] = [];

  /** @param onComplete receives the definition when {@link ControllerBuilder.complete} is called with a reconcile. */
  constructor(
    private readonly onComplete?: (definition: ControllerDefinition<T>, reconciler: Reconciler<T>) => void,
  ) {}

  /** The primary kind: each of its objects is one request, reconciled on its events. */
  for<U extends KubeObject>(kind: Kind<U>, options: ForOptions<U> = {}): ControllerBuilder<U> {
    const self = this as unknown as ControllerBuilder<U>;
    if (self.forKind !== undefined) {
      self.problems.push(
        `for(${describeKind(kind)}) after for(${describeKind(self.forKind)}): a controller has one primary kind; use owns() or watches() for the others`,
      );
      return self;
    }
    const { statusUpdates, ...watchOptions } = options;
    if (statusUpdates !== undefined && statusUpdates !== "ignore" && statusUpdates !== "reconcile") {
      self.problems.push(
        `for(${describeKind(kind)}): statusUpdates must be "ignore" (the default) or "reconcile", got ${JSON.stringify(statusUpdates)}`,
      );
    }
    self.forKind = kind;
    self.forStatusUpdates = statusUpdates === "reconcile" ? "reconcile" : "ignore";
    self.forPredicates = watchOptions.predicates ?? [];
    self.forCache = self.cacheOf(`for(${describeKind(kind)})`, watchOptions);
    return self;
  }

  /**
   * A kind the primary owns: an event on one of its objects enqueues the
   * object's controller owner (the `ownerReference` with `controller: true`)
   * when that owner is of the primary kind; with `everyOwner`, every owner
   * of the primary kind. The runtime indexes the kind's cache by controller
   * owner, which `ctx.owned(kind)` reads. In `sharded` mode the kind's cache
   * is divided with the owners' slots (the client labels each child with
   * its controller owner's slot); with `everyOwner` it is kept whole.
   */
  owns<U extends KubeObject>(kind: Kind<U>, options: OwnsOptions<U> = {}): this {
    const { everyOwner, ...watchOptions } = options;
    if (everyOwner !== undefined && typeof everyOwner !== "boolean") {
      this.problems.push(`owns(${describeKind(kind)}): everyOwner must be true or false`);
    }
    this.secondaries.push({
      kind,
      map: { type: "owner", everyOwner: everyOwner === true },
      predicates: watchOptions.predicates ?? [],
      cache: this.cacheOf(`owns(${describeKind(kind)})`, watchOptions),
    });
    return this;
  }

  /**
   * Any kind, with a function from one of its objects to the requests it
   * should wake. The primary kind too (a ConfigMap that points at another
   * ConfigMap): that watch reads the primary's cache (one informer, a
   * second handler), so it takes predicates but no cache options, and in
   * `sharded` mode it sees the objects of this replica's slots only.
   */
  watches<U extends KubeObject>(
    kind: Kind<U>,
    toRequests: MapToRequests<U>,
    options: WatchOptions<U> = {},
  ): this {
    if (typeof toRequests !== "function") {
      this.problems.push(
        `watches(${describeKind(kind)}): the second argument must be a function from an object to requests`,
      );
      return this;
    }
    this.secondaries.push({
      kind,
      map: { type: "mapped", toRequests: toRequests as MapToRequests },
      predicates: options.predicates ?? [],
      cache: this.cacheOf(`watches(${describeKind(kind)})`, options),
    });
    return this;
  }

  /** The cache options of `options` (the predicates left out), their mistakes collected. */
  private cacheOf<U extends KubeObject>(where: string, options: WatchOptions<U>): CacheOptions {
    const { predicates: _predicates, ...cache } = options;
    this.problems.push(...cacheOptionProblems(where, cache as CacheOptions<never>));
    return Object.freeze({ ...cache }) as CacheOptions;
  }

  /**
   * Requests from outside the watched kinds (controller-runtime's
   * `source.Channel`, kube-rs's `reconcile_on`): an async iterable of
   * requests (a timer, a queue consumer) is read from the manager's start
   * until it ends or the manager stops; an event emitter is listened to on
   * its `"request"` event (`options.event` names another). A value that is
   * no `{ namespace, name }` is logged and skipped; an iterable that throws
   * is logged and read no more.
   *
   * Every replica reads the sources, whatever the mode. In `leader` mode a
   * standby queues what it reads and works it once it leads. In `sharded`
   * mode a request whose key falls in a slot another replica holds is
   * dropped on this one, and the replica holding the slot reconciles it
   * from its own reading of the source. So a source every replica sees (a
   * timer, a broadcast) suits every mode; a source that hands each item to
   * one reader (a queue with competing consumers) would lose items to a
   * standby or to the wrong replica: read it in a runnable that runs on the
   * leader (`needsLeader`, the default) and pass its requests to
   * `manager.enqueue` of a `leader` controller.
   *
   * ```ts
   * async function* everyMinute(signal: AbortSignal) {
   *   for await (const _ of setInterval(60_000, undefined, { signal })) yield { namespace: "", name: "global" };
   * }
   * on.for(Widgets).triggers(everyMinute(signal));
   * ```
   */
  triggers(source: TriggerSource, options: TriggerOptions = {}): this {
    if (!isTriggerSource(source)) {
      this.problems.push(
        "triggers(source): the source must be an async iterable of requests or an event emitter (with on and off) of them",
      );
      return this;
    }
    this.triggerSources.push({ source, event: options.event ?? "request" });
    return this;
  }

  /** Predicates on the primary kind's events, added to those given to `for`. */
  withEventFilter(...predicates: readonly Predicate<T>[]): this {
    this.forPredicates = [...this.forPredicates, ...predicates];
    return this;
  }

  /** The controller's name in logs, metrics (`controller` label) and its ring. Default: the primary kind, lowercase. */
  named(name: string): this {
    this.controllerName = name;
    return this;
  }

  /** Merges `options` into what was set before. */
  withOptions(options: ControllerOptions): this {
    this.options = { ...this.options, ...options };
    return this;
  }

  /**
   * Declares permissions the reconcile needs beyond its kinds (reading a
   * Secret, creating a Job), as kubebuilder's `+kubebuilder:rbac` markers
   * do: `tessera generate` writes them into the operator's ClusterRole. The
   * manager itself does not use them.
   *
   * ```ts
   * on.for(Widgets).owns(ConfigMaps).needs({ apiGroups: [""], resources: ["secrets"], verbs: ["get"] });
   * ```
   */
  needs(...rules: readonly PermissionRule[]): this {
    for (const rule of rules) {
      const empty = (["apiGroups", "resources", "verbs"] as const).filter(
        (k) => !Array.isArray(rule?.[k]) || rule[k].length === 0,
      );
      if (empty.length) {
        this.problems.push(
          `needs(${JSON.stringify(rule)}): ${empty.join(", ")} must be non-empty lists, e.g. { apiGroups: [""], resources: ["secrets"], verbs: ["get"] }`,
        );
        continue;
      }
      this.permissions.push({
        apiGroups: [...rule.apiGroups],
        resources: [...rule.resources],
        verbs: [...rule.verbs],
      });
    }
    return this;
  }

  /**
   * A finalizer the runtime manages (kube-rs's `finalizer()`, JOSDK's
   * `Cleaner`): it is added to each live object before its first reconcile,
   * and once the object is being deleted the reconciler's
   * `cleanup(object, ctx)` runs instead of `reconcile`, the finalizer
   * removed when cleanup says `CleanupResult.done`. Both writes are JSON
   * patches guarded by a `test` of the list, so they need `patch` on the
   * kind (which `tessera generate` grants) and neither GET nor PUT.
   *
   * ```ts
   * on.for(Widgets).finalizer("example.com/release-bucket");
   * ```
   */
  finalizer(name: string): this {
    const problems = finalizerNameProblems(name);
    if (this.finalizerName !== undefined && this.finalizerName !== name) {
      problems.push(
        `finalizer("${name}") after finalizer("${this.finalizerName}"): a controller manages one finalizer`,
      );
    }
    if (problems.length > 0) this.problems.push(...problems);
    else this.finalizerName = name;
    return this;
  }

  /** Shorthand for `withOptions({ mode })`. */
  mode(mode: NonNullable<ControllerOptions["mode"]>): this {
    return this.withOptions({ mode });
  }

  /**
   * Ends the declaration with the reconcile (a function or a {@link Reconciler})
   * and hands it to the manager this builder came from. Throws the collected
   * {@link BuilderError} when the declaration is not valid.
   */
  complete(reconciler: Reconciler<T> | ReconcileFunction<T>): void {
    const definition = this.build();
    const asReconciler: Reconciler<T> =
      typeof reconciler === "function" ? { reconcile: reconciler } : reconciler;
    const mismatch = cleanupDeclarationProblems(
      definition.finalizer,
      typeof asReconciler.cleanup === "function",
    );
    if (mismatch.length > 0) throw new BuilderError(definition.name, mismatch);
    if (this.onComplete === undefined) {
      throw new BuilderError(definition.name, [
        "complete() needs a builder from manager.controller(); a plugin's controller() returns its builder instead",
      ]);
    }
    this.onComplete(definition, asReconciler);
  }

  /** The definition, or the {@link BuilderError} listing every mistake. */
  build(): ControllerDefinition<T> {
    const problems = [...this.problems];
    const forKind = this.forKind;
    const name = this.controllerName ?? forKind?.kind.toLowerCase() ?? "(unnamed)";
    if (forKind === undefined) problems.push("no primary kind: call for(kind) once, e.g. for(ConfigMaps)");
    if (this.controllerName !== undefined && !CONTROLLER_NAME.test(this.controllerName)) {
      problems.push(
        `name "${this.controllerName}" must be lowercase letters, digits and '-' (it names Leases and metric labels)`,
      );
    }
    const { mode, concurrency, reconcileTimeoutMs, maxBackoffMs, rateLimiter } = this.options;
    if (mode !== undefined && !MODES.has(mode)) {
      problems.push(`mode "${String(mode)}" is not one of "leader", "sharded", "every-replica"`);
    }
    if (concurrency !== undefined && !(Number.isInteger(concurrency) && concurrency >= 1)) {
      problems.push(`concurrency must be a whole number of at least 1, got ${concurrency}`);
    }
    if (
      reconcileTimeoutMs !== undefined &&
      !(reconcileTimeoutMs >= 0 && Number.isFinite(reconcileTimeoutMs))
    ) {
      problems.push(
        `reconcileTimeoutMs must be 0 (no limit) or a positive number of ms, got ${reconcileTimeoutMs}`,
      );
    }
    if (maxBackoffMs !== undefined && !(maxBackoffMs > 0 && Number.isFinite(maxBackoffMs))) {
      problems.push(`maxBackoffMs must be a positive number of ms, got ${maxBackoffMs}`);
    }
    if (maxBackoffMs !== undefined && rateLimiter !== undefined) {
      problems.push(
        "maxBackoffMs caps the default rate limiter; with a rateLimiter of your own, set the cap in it instead",
      );
    }
    for (const secondary of this.secondaries) {
      if (!forKind || !sameKind(secondary.kind, forKind)) continue;
      if (secondary.map.type === "owner") {
        problems.push(
          `${describeKind(secondary.kind)} is the primary kind; owns() takes other kinds (its own events already reconcile it); to wake other objects of the primary kind from one, use watches(kind, map)`,
        );
      } else if (Object.keys(secondary.cache).length > 0) {
        problems.push(
          `watches(${describeKind(secondary.kind)}): a watch of the primary kind reads the primary's cache; give cache options (${Object.keys(secondary.cache).join(", ")}) to for() instead`,
        );
      }
    }
    const maxIntervalMs = this.options.maxIntervalMs;
    if (maxIntervalMs !== undefined && !(maxIntervalMs >= 0 && Number.isFinite(maxIntervalMs))) {
      problems.push(
        `maxIntervalMs must be 0 (no resync floor) or a positive number of ms, got ${maxIntervalMs}`,
      );
    }
    if (forKind) problems.push(...indexConflicts(forKind, this.forCache, this.secondaries));
    if (problems.length > 0 || forKind === undefined) throw new BuilderError(name, problems);
    return Object.freeze({
      name,
      for: forKind,
      predicates: this.forPredicates,
      statusUpdates: this.forStatusUpdates,
      cache: this.forCache,
      watches: [...this.secondaries],
      triggers: [...this.triggerSources],
      options: Object.freeze({ ...this.options }),
      permissions: [...this.permissions],
      ...(this.finalizerName !== undefined ? { finalizer: this.finalizerName } : {}),
    });
  }
}

/** An index name given two different functions for one kind (by `for`, `owns` or `watches`). */
function indexConflicts(
  forKind: Kind,
  forCache: CacheOptions,
  secondaries: readonly WatchDeclaration[],
): string[] {
  const seen = new Map<string, IndexFunction>();
  const problems: string[] = [];
  for (const [kind, cache] of [
    [forKind, forCache] as const,
    ...secondaries.map((s) => [s.kind, s.cache] as const),
  ]) {
    for (const [name, fn] of Object.entries(cache.indexes ?? {})) {
      const key = `${kind.group}/${kind.kind}/${name}`;
      const before = seen.get(key);
      if (before !== undefined && before !== fn) {
        problems.push(
          `indexes: "${name}" of ${describeKind(kind)} is declared twice with different functions; give one of them another name, or pass the same function`,
        );
      }
      seen.set(key, fn);
    }
  }
  return problems;
}

function sameKind(a: Kind, b: Kind): boolean {
  return a.group === b.group && a.version === b.version && a.kind === b.kind;
}
