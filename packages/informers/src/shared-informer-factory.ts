import { SpanStatusCode } from "@opentelemetry/api";
import {
  resolveInstrumentation,
  timeoutScope,
  whenAborted,
  type Instrumentation,
  type ResolvedInstrumentation,
  type Runnable,
  type Syncable,
} from "@tessera/core";
import {
  KubeListerWatcher,
  ProtobufCodec,
  type Compression,
  type Indexers,
  type ListerWatcher,
} from "@tessera/reflector";
import { describeResource, type KubeConfigLike, type KubeObject, type Resource } from "@tessera/client";
import { CacheSyncError, type UnsyncedInformer } from "./cache-sync-error.js";
import type { CompactCacheOptions } from "./compact-store.js";
import { MetadataListerWatcher } from "./metadata-lister-watcher.js";
import { metadataResource, type PartialObjectMetadata } from "./partial-object-metadata.js";
import { ResyncScheduler } from "./resync-scheduler.js";
import { SharedIndexInformer, type InformerReflectorOptions } from "./shared-index-informer.js";
import { stripManagedFields, type Transform } from "./transforms.js";

/** What an informer of a factory lists and watches: a resource and the request's scope. */
export interface ListerWatcherRequest {
  /** The resource's handle (as given to `informerFor`, also for a metadata-only request). */
  resource: Resource;
  /** The namespace; absent for all namespaces or a cluster-scoped resource. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Ask for `PartialObjectMetadata` only. */
  metadataOnly: boolean;
}

/** Options of {@link SharedInformerFactory.informerFor}; absent ones take the factory's defaults. */
export interface InformerOptions<T extends KubeObject> {
  /** Namespace to cache (namespaced resources only); `""` for all namespaces. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Cache `PartialObjectMetadata` only (through the Accept header): no spec, status or data. */
  metadataOnly?: boolean;
  /** Applied to every object before caching; `null` for none even when the factory has a default. */
  transform?: Transform<T> | null;
  /**
   * Index functions the caller needs. Not part of the informer's identity: an
   * informer already made gets those it lacks (the same name with another
   * function throws).
   */
  indexers?: Indexers<T>;
  /**
   * Keep the objects as their JSON text, decoded when read
   * (`SharedIndexInformerOptions.compact`); absent: the factory's default.
   * Not part of the informer's identity: the first request of an informer
   * decides.
   */
  compact?: boolean | CompactCacheOptions;
}

/**
 * Options of a {@link SharedInformerFactory}. Its instrumentation (clock,
 * random source, logger, meter, tracer) is handed to every informer it makes.
 */
export interface SharedInformerFactoryOptions extends Instrumentation {
  /** The cluster to talk to; informers list and watch with the reflector's `KubeListerWatcher`. */
  kubeConfig?: KubeConfigLike;
  /** Makes the ListerWatcher of each informer instead (to wrap, filter or test); wins over `kubeConfig`. */
  listerWatcherFor?: (request: ListerWatcherRequest) => ListerWatcher;
  /** Default namespace of namespaced resources; default all namespaces. */
  namespace?: string;
  /** Default label selector. */
  labelSelector?: string;
  /** Default field selector. */
  fieldSelector?: string;
  /** Default transform, e.g. {@link stripManagedFields}. */
  transform?: Transform<KubeObject>;
  /** Resync period of handlers that set none; default none. */
  defaultResyncPeriodMs?: number;
  /** Whether informers keep their objects compact (`SharedIndexInformerOptions.compact`) unless asked otherwise; default `false`. */
  compact?: boolean | CompactCacheOptions;
  /** Passed to every informer's reflector. */
  reflector?: InformerReflectorOptions<KubeObject>;
  /** Offered on every LIST and WATCH of the `kubeConfig` path; see `KubeListerWatcherOptions.compression`. */
  compression?: Compression;
  /** The wire of the `kubeConfig` path (`KubeListerWatcherOptions.wire`); protobuf informers share one decoder. */
  wire?: "json" | "protobuf";
  /**
   * Called with each informer the factory makes, once, as it is made (a
   * manager warns of a second cache of a kind its sharded controllers divide).
   */
  onInformer?: (informer: SharedIndexInformer<KubeObject>) => void;
}

/**
 * Raised (synchronously) when a factory is run a second time, or asked for
 * an informer once it has stopped (its run's signal aborted).
 */
export class FactoryStateError extends Error {
  override name = "FactoryStateError";
}

interface Entry {
  readonly key: string;
  readonly informer: SharedIndexInformer<KubeObject>;
  uses: number;
  /** Stops this informer alone, when its last user releases it. */
  readonly release: AbortController;
  /** Its run (failures logged), once started. */
  running: Promise<void> | undefined;
}

/**
 * Owns the informers of a process (or of one manager): one per resource and
 * options, shared by every caller that asks for the same, all resyncing on a
 * single {@link ResyncScheduler} timer.
 *
 * A {@link Runnable}: `run(signal)` runs every informer it holds and every
 * one made later, until the signal aborts; it settles once all of them have
 * stopped, and the factory cannot run again. A {@link Syncable}:
 * {@link SharedInformerFactory.waitForSync} answers whether every informer
 * held synced; {@link SharedInformerFactory.requireSync} is the same wait
 * that fails with a {@link CacheSyncError} naming those that did not.
 *
 * ```ts
 * const factory = new SharedInformerFactory({ kubeConfig: kc, transform: stripManagedFields });
 * const pods = factory.informerFor(Pods); // SharedIndexInformer<V1Pod>
 * pods.addEventHandler({ onAdd: (pod) => queue.add(pod) });
 * const running = factory.run(signal);
 * await factory.requireSync(signal, 60_000);
 * // ... until signal aborts
 * await running;
 * ```
 */
export class SharedInformerFactory implements Runnable, Syncable {
  private readonly options: SharedInformerFactoryOptions;
  private readonly tools: ResolvedInstrumentation;
  private readonly scheduler: ResyncScheduler;
  private readonly entries = new Map<string, Entry>();
  private readonly byInformer = new Map<SharedIndexInformer<KubeObject>, Entry>();
  private readonly transformIds = new WeakMap<object, number>();
  /** Informer runs not settled yet, released ones included: what the factory's run waits for. */
  private readonly runs = new Set<Promise<void>>();
  private transformSeq = 0;
  private state: "new" | "running" | "stopped" = "new";
  private runSignal: AbortSignal | undefined;

  constructor(options: SharedInformerFactoryOptions) {
    if (!options.kubeConfig && !options.listerWatcherFor) {
      throw new TypeError("SharedInformerFactory needs a kubeConfig or a listerWatcherFor");
    }
    this.options = options;
    this.tools = resolveInstrumentation(options, "@tessera/informers");
    this.scheduler = new ResyncScheduler(this.tools);
  }

  /** The informers the factory holds. */
  get informers(): SharedIndexInformer<KubeObject>[] {
    return Array.from(this.entries.values(), (e) => e.informer);
  }

  /**
   * The informer for `resource` with `options` (over the factory's defaults):
   * the same instance for the same resource and options, made on first use.
   * Each call counts as one use until {@link SharedInformerFactory.release}.
   * While the factory runs, a new informer starts at once. Throws
   * {@link FactoryStateError} once the factory has stopped.
   *
   * The object type is the handle's: `informerFor(ConfigMaps)` is a
   * `SharedIndexInformer<V1ConfigMap>` (the options do not change it).
   */
  informerFor<T extends KubeObject>(
    resource: Resource<T>,
    options: NoInfer<InformerOptions<T>> = {},
  ): SharedIndexInformer<T> {
    if (this.stopped) throw new FactoryStateError("the informer factory has stopped");
    const request = this.request(resource, options);
    const transform = options.transform === null ? undefined : (options.transform ?? this.options.transform);
    const key = this.keyOf(request, transform);
    let entry = this.entries.get(key);
    if (!entry) {
      const informer = this.makeInformer(
        request,
        transform as Transform<KubeObject> | undefined,
        options.compact ?? this.options.compact ?? false,
      );
      entry = { key, informer, uses: 0, release: new AbortController(), running: undefined };
      this.entries.set(key, entry);
      this.byInformer.set(informer, entry);
      if (this.state === "running") this.start(entry);
      this.options.onInformer?.(informer);
    }
    entry.uses++;
    if (options.indexers) addMissingIndexers(entry.informer, options.indexers);
    return entry.informer as unknown as SharedIndexInformer<T>;
  }

  /**
   * {@link SharedInformerFactory.informerFor} with `metadataOnly: true`: a
   * cache of `PartialObjectMetadata`, for the handle of any resource.
   */
  metadataInformerFor(
    resource: Resource,
    options: Omit<InformerOptions<PartialObjectMetadata>, "metadataOnly"> = {},
  ): SharedIndexInformer<PartialObjectMetadata> {
    return this.informerFor(metadataResource(resource), { ...options, metadataOnly: true });
  }

  /**
   * Drops one use of `informer` (a reference count, not a stop of the
   * factory). When nobody uses it any more the factory lets it go: its run
   * is stopped (its watch ends), then it is closed (its handlers are closed
   * and its cache is emptied); a later `informerFor` makes a new one.
   * Resolves once it stopped.
   */
  async release<T extends KubeObject>(informer: SharedIndexInformer<T>): Promise<void> {
    const entry = this.byInformer.get(informer as unknown as SharedIndexInformer<KubeObject>);
    if (!entry) return;
    entry.uses--;
    if (entry.uses > 0) return;
    this.entries.delete(entry.key);
    this.byInformer.delete(entry.informer);
    this.tools.logger.info("informer released", {
      informer: entry.informer.name,
      resource: entry.informer.resource,
    });
    entry.release.abort(new Error(`informer ${entry.informer.name} released`));
    await entry.running;
    entry.informer.close();
  }

  /**
   * Runs every informer held now and every one made later until `signal`
   * aborts; resolves once all of them have stopped (a failing informer is
   * logged, the others go on). A factory runs once: a second call throws
   * {@link FactoryStateError} (synchronously).
   */
  run(signal: AbortSignal): Promise<void> {
    if (this.state !== "new") {
      throw new FactoryStateError(
        this.state === "running" ? "the informer factory is running" : "the informer factory has stopped",
      );
    }
    this.state = "running";
    this.runSignal = signal;
    for (const entry of this.entries.values()) this.start(entry);
    return this.runUntilAborted(signal);
  }

  /** True when every informer held now has synced. */
  hasSynced(): boolean {
    return this.informers.every((i) => i.hasSynced());
  }

  /**
   * Resolves `true` once every informer held now has synced; `false` as
   * soon as `signal` aborts or one of them stops (the factory stopped, it
   * was released) without having synced. Never rejects. Informers that fail
   * keep retrying meanwhile; to learn which did not sync, and why, use
   * {@link SharedInformerFactory.requireSync}.
   */
  waitForSync(signal?: AbortSignal): Promise<boolean> {
    return allSynced(this.informers, signal);
  }

  /**
   * {@link SharedInformerFactory.waitForSync} where not syncing is an error,
   * as controller-runtime's `WaitForCacheSync` reports the informers that did
   * not sync: resolves once every informer held now has synced, and rejects
   * with a {@link CacheSyncError} naming those that have not (with their last
   * list or watch error) when `timeoutMs` passes (on the factory's clock),
   * `signal` aborts, or one of them stops first. Informers that fail keep
   * retrying; the others work on.
   */
  async requireSync(signal?: AbortSignal, timeoutMs?: number): Promise<void> {
    const informers = this.informers;
    const pending = informers.filter((i) => !i.hasSynced());
    if (pending.length === 0) return;
    const clock = this.tools.clock;
    const started = clock.now();
    const span = this.tools.tracer.startSpan("informers.requireSync", {
      attributes: { "tessera.informers": informers.length, "tessera.unsynced": pending.length },
    });
    const scope =
      timeoutMs === undefined
        ? undefined
        : timeoutScope(clock, timeoutMs, "waiting for caches to sync", [signal]);
    try {
      if (await allSynced(pending, scope?.signal ?? signal)) {
        span.end();
        return;
      }
      const reason = scope?.timedOut ? "timeout" : signal?.aborted ? "aborted" : "stopped";
      const error = new CacheSyncError(
        reason,
        informers.filter((i) => !i.hasSynced()).map(describeInformer),
        clock.now() - started,
        reason === "aborted" ? { cause: signal?.reason } : undefined,
      );
      span.recordException(error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
      span.end();
      throw error;
    } finally {
      scope?.close();
    }
  }

  private request(
    resource: Resource,
    options: Pick<
      InformerOptions<KubeObject>,
      "namespace" | "labelSelector" | "fieldSelector" | "metadataOnly"
    >,
  ): ListerWatcherRequest {
    const namespace =
      resource.scope === "Namespaced" ? (options.namespace ?? this.options.namespace ?? "") : "";
    const labelSelector = options.labelSelector ?? this.options.labelSelector ?? "";
    const fieldSelector = options.fieldSelector ?? this.options.fieldSelector ?? "";
    return {
      resource,
      ...(namespace ? { namespace } : {}),
      ...(labelSelector ? { labelSelector } : {}),
      ...(fieldSelector ? { fieldSelector } : {}),
      metadataOnly: options.metadataOnly ?? false,
    };
  }

  /** The identity of an informer: what it lists and watches, and how it transforms. */
  private keyOf(request: ListerWatcherRequest, transform: object | undefined): string {
    const r = request.resource;
    return JSON.stringify([
      r.group,
      r.version,
      r.plural,
      request.namespace ?? "",
      request.labelSelector ?? "",
      request.fieldSelector ?? "",
      request.metadataOnly,
      transform === undefined ? 0 : this.transformId(transform),
    ]);
  }

  private transformId(transform: object): number {
    let id = this.transformIds.get(transform);
    if (id === undefined) {
      id = ++this.transformSeq;
      this.transformIds.set(transform, id);
    }
    return id;
  }

  private makeInformer(
    request: ListerWatcherRequest,
    transform: Transform<KubeObject> | undefined,
    compact: boolean | CompactCacheOptions,
  ): SharedIndexInformer<KubeObject> {
    const o = this.options;
    const listerWatcher = o.listerWatcherFor
      ? o.listerWatcherFor(request)
      : this.kubeListerWatcher(request, transform === stripManagedFields);
    const selectors = [request.labelSelector, request.fieldSelector].filter(Boolean).join(",");
    const where = request.namespace ? ` in ${request.namespace}` : "";
    const name =
      `${describeResource(request.resource)}${where}` +
      (selectors ? ` [${selectors}]` : "") +
      (request.metadataOnly ? " (metadata)" : "");
    return new SharedIndexInformer<KubeObject>({
      listerWatcher,
      handle: request.metadataOnly ? metadataResource(request.resource) : request.resource,
      name,
      cache: "shared",
      resyncScheduler: this.scheduler,
      clock: this.tools.clock,
      random: this.tools.random,
      logger: this.tools.logger,
      meter: this.tools.meter,
      // Only a tracer given goes to the informers' reflectors, which trace under their own name otherwise.
      ...(o.tracer ? { tracer: o.tracer } : {}),
      ...(transform ? { transform } : {}),
      ...(compact ? { compact } : {}),
      ...(o.defaultResyncPeriodMs !== undefined ? { defaultResyncPeriodMs: o.defaultResyncPeriodMs } : {}),
      ...(o.reflector ? { reflector: o.reflector } : {}),
    });
  }

  private codec: ProtobufCodec | undefined;

  /** One protobuf decoder for every informer of the factory: each kind's messages are then loaded once. */
  private protobufCodec(): ProtobufCodec {
    this.codec ??= new ProtobufCodec();
    return this.codec;
  }

  /** `strip`: the informer strips managedFields, so the decoder need not shape them (on protobuf, a large saving). */
  private kubeListerWatcher(request: ListerWatcherRequest, strip: boolean): ListerWatcher {
    const kc = this.options.kubeConfig as KubeConfigLike;
    const options = {
      ...(request.namespace ? { namespace: request.namespace } : {}),
      ...(request.labelSelector ? { labelSelector: request.labelSelector } : {}),
      ...(request.fieldSelector ? { fieldSelector: request.fieldSelector } : {}),
      ...(this.options.compression ? { compression: this.options.compression } : {}),
      ...(this.options.wire === "protobuf"
        ? { wire: "protobuf" as const, protobufCodec: this.protobufCodec() }
        : {}),
      ...(strip ? { stripManagedFields: true } : {}),
    };
    return request.metadataOnly
      ? new MetadataListerWatcher(kc, request.resource, options)
      : new KubeListerWatcher(kc, request.resource, options);
  }

  /** Whether the factory has stopped, or is stopping (its run's signal aborted). */
  private get stopped(): boolean {
    return this.state === "stopped" || this.runSignal?.aborted === true;
  }

  private async runUntilAborted(signal: AbortSignal): Promise<void> {
    this.tools.logger.info("informer factory running", { informers: this.entries.size });
    await whenAborted(signal);
    this.state = "stopped";
    // Every informer runs on this signal (or has been released): each is stopping now.
    const stopping = this.runs.size;
    await Promise.all(Array.from(this.runs));
    this.tools.logger.info("informer factory stopped", { informers: stopping });
  }

  private start(entry: Entry): void {
    const informer = entry.informer;
    const signal = AbortSignal.any([this.runSignal as AbortSignal, entry.release.signal]);
    const running = informer.run(signal).catch((err: unknown) => {
      this.tools.logger.error("informer failed", {
        informer: informer.name,
        resource: informer.resource,
        error: err instanceof Error ? err.message : String(err),
      });
    });
    entry.running = running;
    this.runs.add(running);
    void running.finally(() => this.runs.delete(running));
  }
}

/** `true` once every one of `informers` synced; `false` as soon as one answers it will not (or `signal` aborts). */
async function allSynced(
  informers: readonly SharedIndexInformer<KubeObject>[],
  signal: AbortSignal | undefined,
): Promise<boolean> {
  if (informers.every((i) => i.hasSynced())) return true;
  // One `false` is the answer: the others' waits are let go of through a signal of our own.
  const done = new AbortController();
  const parents = signal ? [signal, done.signal] : [done.signal];
  const waitSignal = AbortSignal.any(parents);
  try {
    const answers = informers.map((i) =>
      i.waitForSync(waitSignal).then((synced) => {
        if (!synced) done.abort();
        return synced;
      }),
    );
    return (await Promise.all(answers)).every(Boolean);
  } finally {
    done.abort();
  }
}

function describeInformer(informer: SharedIndexInformer<KubeObject>): UnsyncedInformer {
  return {
    resource: informer.resource,
    informer: informer.name,
    ...(informer.namespace ? { namespace: informer.namespace } : {}),
    ...(informer.lastError !== undefined ? { lastError: informer.lastError } : {}),
  };
}

function addMissingIndexers(informer: SharedIndexInformer<KubeObject>, indexers: Indexers<KubeObject>): void {
  const existing = informer.getIndexers();
  const missing: Indexers<KubeObject> = {};
  for (const [name, fn] of Object.entries(indexers)) {
    if (existing[name] === fn) continue;
    missing[name] = fn; // a different function under a name in use makes addIndexers throw
  }
  if (Object.keys(missing).length > 0) informer.addIndexers(missing);
}
