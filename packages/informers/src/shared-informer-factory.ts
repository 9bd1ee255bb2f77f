import type { KubeConfig } from "@kubernetes/client-node";
import {
  resolveInstrumentation,
  type Instrumentation,
  type ResolvedInstrumentation,
  type Timer,
} from "@tessera/core";
import {
  describeResource,
  KubeListerWatcher,
  type Indexers,
  type KubeObject,
  type ListerWatcher,
  type ResourceDescriptor,
} from "@tessera/reflector";
import { CacheSyncError, type UnsyncedInformer } from "./cache-sync-error.js";
import { MetadataListerWatcher } from "./metadata-lister-watcher.js";
import type { PartialObjectMetadata } from "./partial-object-metadata.js";
import { ResyncScheduler } from "./resync-scheduler.js";
import { SharedIndexInformer, type InformerReflectorOptions } from "./shared-index-informer.js";
import type { Transform } from "./transforms.js";

/** What an informer of a factory lists and watches: a resource and the request's scope. */
export interface ListerWatcherRequest {
  resource: ResourceDescriptor;
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
}

/**
 * Options of a {@link SharedInformerFactory}. Its instrumentation (clock,
 * random source, logger, meter, tracer) is handed to every informer it makes.
 */
export interface SharedInformerFactoryOptions extends Instrumentation {
  /** The cluster to talk to; informers list and watch with the reflector's `KubeListerWatcher`. */
  kubeConfig?: KubeConfig;
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
  /** Passed to every informer's reflector. */
  reflector?: InformerReflectorOptions<KubeObject>;
}

/** Raised when a factory is used after {@link SharedInformerFactory.shutdown}. */
export class FactoryShutDownError extends Error {
  override name = "FactoryShutDownError";
}

interface Entry {
  readonly key: string;
  readonly informer: SharedIndexInformer<KubeObject>;
  uses: number;
  running: Promise<void> | undefined;
}

/**
 * Owns the informers of a process (or of one manager): one per resource and
 * options, shared by every caller that asks for the same, all resyncing on a
 * single {@link ResyncScheduler} timer.
 *
 * ```ts
 * const factory = new SharedInformerFactory({ kubeConfig: kc, transform: stripManagedFields });
 * const pods = factory.informerFor<V1Pod>({ group: "", version: "v1", plural: "pods", namespaced: true });
 * pods.addEventHandler({ onAdd: (pod) => queue.add(pod) });
 * factory.start();
 * await factory.waitForCacheSync(AbortSignal.timeout(60_000));
 * // ...
 * await factory.shutdown();
 * ```
 */
export class SharedInformerFactory {
  private readonly options: SharedInformerFactoryOptions;
  private readonly tools: ResolvedInstrumentation;
  private readonly scheduler: ResyncScheduler;
  private readonly entries = new Map<string, Entry>();
  private readonly byInformer = new Map<SharedIndexInformer<KubeObject>, Entry>();
  private readonly transformIds = new WeakMap<object, number>();
  private readonly stopController = new AbortController();
  private transformSeq = 0;
  private started = false;
  private shutDown = false;

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
   * After {@link SharedInformerFactory.start}, a new informer starts at once.
   */
  informerFor<T extends KubeObject = KubeObject>(
    resource: ResourceDescriptor,
    options: InformerOptions<T> = {},
  ): SharedIndexInformer<T> {
    if (this.shutDown) throw new FactoryShutDownError("the informer factory has been shut down");
    const request = this.request(resource, options);
    const transform = options.transform === null ? undefined : (options.transform ?? this.options.transform);
    const key = this.keyOf(request, transform);
    let entry = this.entries.get(key);
    if (!entry) {
      const informer = this.makeInformer(request, transform as Transform<KubeObject> | undefined);
      entry = { key, informer, uses: 0, running: undefined };
      this.entries.set(key, entry);
      this.byInformer.set(informer, entry);
      if (this.started) this.run(entry);
    }
    entry.uses++;
    if (options.indexers) addMissingIndexers(entry.informer, options.indexers as Indexers<KubeObject>);
    return entry.informer as unknown as SharedIndexInformer<T>;
  }

  /** {@link SharedInformerFactory.informerFor} with `metadataOnly: true`: a cache of `PartialObjectMetadata`. */
  metadataInformerFor(
    resource: ResourceDescriptor,
    options: Omit<InformerOptions<PartialObjectMetadata>, "metadataOnly"> = {},
  ): SharedIndexInformer<PartialObjectMetadata> {
    return this.informerFor<PartialObjectMetadata>(resource, { ...options, metadataOnly: true });
  }

  /**
   * Drops one use of `informer`. When nobody uses it any more it is removed:
   * its watch stops, its handlers are removed and its cache is emptied; a
   * later `informerFor` makes a new one. Resolves once it stopped.
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
    await entry.informer.dispose();
  }

  /** Starts every informer not running yet; informers made later start as they are made. */
  start(): void {
    if (this.shutDown) throw new FactoryShutDownError("the informer factory has been shut down");
    this.started = true;
    for (const entry of this.entries.values()) if (!entry.running) this.run(entry);
  }

  /**
   * Resolves once every informer the factory holds now has synced. Rejects
   * with a {@link CacheSyncError} naming those that have not (and why, when
   * their last list or watch failed) when `timeoutMs` passes or `signal`
   * aborts first. Informers that fail keep retrying; the others work on.
   */
  async waitForCacheSync(signal?: AbortSignal, timeoutMs?: number): Promise<void> {
    const informers = this.informers;
    const pending = informers.filter((i) => !i.hasSynced());
    if (pending.length === 0) return;
    const started = this.tools.clock.now();
    const span = this.tools.tracer.startSpan("informers.waitForCacheSync", {
      attributes: { "tessera.informers": informers.length, "tessera.unsynced": pending.length },
    });
    let timer: Timer | undefined;
    let onAbort: (() => void) | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        const unsynced = (): UnsyncedInformer[] =>
          informers.filter((i) => !i.hasSynced()).map(describeInformer);
        const giveUp = (reason: "timeout" | "aborted"): void =>
          reject(
            new CacheSyncError(
              reason,
              unsynced(),
              this.tools.clock.now() - started,
              reason === "aborted" ? { cause: signal?.reason } : undefined,
            ),
          );
        if (signal?.aborted) return giveUp("aborted");
        onAbort = () => giveUp("aborted");
        signal?.addEventListener("abort", onAbort, { once: true });
        if (timeoutMs !== undefined) timer = this.tools.clock.setTimer(timeoutMs, () => giveUp("timeout"));
        void Promise.all(pending.map((i) => i.whenSynced())).then(() => resolve());
      });
      span.end();
    } catch (err) {
      span.recordException(err as Error);
      span.end();
      throw err;
    } finally {
      timer?.cancel();
      if (onAbort) signal?.removeEventListener("abort", onAbort);
    }
  }

  /** Stops every informer and resolves once all have stopped; the factory cannot be used again. */
  async shutdown(): Promise<void> {
    this.shutDown = true;
    this.stopController.abort(new Error("informer factory shut down"));
    const entries = Array.from(this.entries.values());
    await Promise.all(entries.map((e) => e.informer.stop()));
    this.tools.logger.info("informer factory shut down", { informers: entries.length });
  }

  private request(
    resource: ResourceDescriptor,
    options: Pick<
      InformerOptions<KubeObject>,
      "namespace" | "labelSelector" | "fieldSelector" | "metadataOnly"
    >,
  ): ListerWatcherRequest {
    const namespace = resource.namespaced ? (options.namespace ?? this.options.namespace ?? "") : "";
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
  ): SharedIndexInformer<KubeObject> {
    const o = this.options;
    const listerWatcher = o.listerWatcherFor ? o.listerWatcherFor(request) : this.kubeListerWatcher(request);
    const selectors = [request.labelSelector, request.fieldSelector].filter(Boolean).join(",");
    const where = request.namespace ? ` in ${request.namespace}` : "";
    const name =
      `${describeResource(request.resource)}${where}` +
      (selectors ? ` [${selectors}]` : "") +
      (request.metadataOnly ? " (metadata)" : "");
    return new SharedIndexInformer<KubeObject>({
      listerWatcher,
      name,
      resyncScheduler: this.scheduler,
      clock: this.tools.clock,
      random: this.tools.random,
      logger: this.tools.logger,
      meter: this.tools.meter,
      // Only a tracer given goes to the informers' reflectors, which trace under their own name otherwise.
      ...(o.tracer ? { tracer: o.tracer } : {}),
      ...(transform ? { transform } : {}),
      ...(o.defaultResyncPeriodMs !== undefined ? { defaultResyncPeriodMs: o.defaultResyncPeriodMs } : {}),
      ...(o.reflector ? { reflector: o.reflector } : {}),
    });
  }

  private kubeListerWatcher(request: ListerWatcherRequest): ListerWatcher {
    const kc = this.options.kubeConfig as KubeConfig;
    const options = {
      ...(request.namespace ? { namespace: request.namespace } : {}),
      ...(request.labelSelector ? { labelSelector: request.labelSelector } : {}),
      ...(request.fieldSelector ? { fieldSelector: request.fieldSelector } : {}),
    };
    return request.metadataOnly
      ? new MetadataListerWatcher(kc, request.resource, options)
      : new KubeListerWatcher(kc, request.resource, options);
  }

  private run(entry: Entry): void {
    const informer = entry.informer;
    entry.running = informer.run(this.stopController.signal).catch((err: unknown) => {
      this.tools.logger.error("informer failed", {
        informer: informer.name,
        resource: informer.resource,
        error: err instanceof Error ? err.message : String(err),
      });
    });
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
