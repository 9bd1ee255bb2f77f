import { SpanStatusCode, type Span, type Tracer } from "@opentelemetry/api";
import {
  resolveInstrumentation,
  toError,
  type Instrumentation,
  type LogFields,
  type Logger,
  type Runnable,
  type Syncable,
} from "@tessera/core";
import {
  DeltaFIFO,
  DeletedFinalStateUnknown,
  IndexedStore,
  indexByNamespace,
  NAMESPACE_INDEX,
  Reflector,
  type DeltaBatch,
  type Indexers,
  type ListerWatcher,
  type ReflectorHealth,
  type ReflectorOptions,
  type ReflectorStore,
  type StagedReplace,
} from "@tessera/reflector";
import { type KubeObject, type Resource } from "@tessera/client";
import { CompactStore, type CompactCacheOptions } from "./compact-store.js";
import { HandlerDelivery } from "./handler-delivery.js";
import type { HandlerRegistration } from "./handler-registration.js";
import { InformerMetrics } from "./informer-metrics.js";
import type { InformerSource, InformerSourceFactory } from "./informer-source.js";
import { Lister } from "./lister.js";
import type { EventHandlerOptions, Notification, ResourceEventHandler } from "./resource-event-handler.js";
import { ResyncScheduler, type ResyncSchedule } from "./resync-scheduler.js";
import { SyncWaiters } from "./sync-waiters.js";
import type { Transform } from "./transforms.js";

/** The reflector settings an informer passes through unchanged (see {@link ReflectorOptions}). */
export type InformerReflectorOptions<T extends KubeObject> = Pick<
  ReflectorOptions<T>,
  | "watchList"
  | "pageSize"
  | "minWatchTimeoutSeconds"
  | "inactivityMarginMs"
  | "initialEventsTimeoutMs"
  | "backoff"
  | "consistencyCheck"
>;

/**
 * Options of a {@link SharedIndexInformer}. Its clock, random source, logger
 * and meter are handed to its reflector too; the meter defaults to the
 * global `@tessera/informers` meter.
 */
export interface SharedIndexInformerOptions<T extends KubeObject> extends Instrumentation {
  /** The collection to cache. */
  listerWatcher: ListerWatcher<T>;
  /**
   * The typed handle of the collection, the informer's
   * {@link SharedIndexInformer.handle}; default the lister-watcher's own
   * (a `KubeListerWatcher` has one).
   */
  handle?: Resource<T>;
  /** Names the informer in logs and metrics; default the resource (and namespace). */
  name?: string;
  /**
   * Which cache this informer is, the `cache` label of its metrics: a
   * {@link SharedInformerFactory} sets `shared`, a sharded controller's
   * share `ring`; default `own`. Two informers of one kind report apart.
   */
  cache?: string;
  /** Index functions besides the namespace index, by name. */
  indexers?: Indexers<T>;
  /** Maintain the `namespace` index ({@link NAMESPACE_INDEX}); default true. */
  namespaceIndex?: boolean;
  /** Applied to every object before it is cached, e.g. {@link stripManagedFields}. */
  transform?: Transform<T>;
  /**
   * Keep each cached object as its JSON text and decode it when read (a
   * {@link CompactStore}): a fraction of the heap of the object graph, for a
   * `JSON.parse` on each read of an object that is not among the most recent
   * ones (`hotObjects`, default 256). Handlers still
   * receive objects, and a read of an object written or read a moment ago
   * is the same object. `true` for the defaults. Default `false`: every
   * object is kept decoded.
   */
  compact?: boolean | CompactCacheOptions;
  /** The resync period of handlers registered without one; default none. */
  defaultResyncPeriodMs?: number;
  /**
   * Schedules resyncs; share one across informers (a factory does) so the
   * process runs a single resync timer. Default: a scheduler of this informer's own.
   */
  resyncScheduler?: ResyncScheduler;
  /** Passed to the reflector (ignored with {@link SharedIndexInformerOptions.source}). */
  reflector?: InformerReflectorOptions<T>;
  /**
   * Fills the informer from something other than one {@link Reflector} over
   * `listerWatcher`, e.g. a sharded reflector (one reflector per owned hash
   * range, all writing into this informer's queue). `listerWatcher` then only
   * names the resource and namespace; `reflector` and `onError` are the
   * source's business. The informer still applies `transform`, and
   * {@link SharedIndexInformer.hasSynced} still means that a complete snapshot
   * (as the source reports it) was cached and handed to every handler.
   */
  source?: InformerSourceFactory<T>;
  /** Called with every failed list or watch; the informer retries on its own. */
  onError?: (err: unknown) => void;
}

/** Keys handled back to back from the queue at most before the processing loop yields to other work. */
const PROCESS_RUN_BEFORE_YIELD = 256;

/**
 * Raised (synchronously) by {@link SharedIndexInformer.run} when the informer
 * runs already or ran before, and by {@link SharedIndexInformer.close} while it runs.
 */
export class InformerStateError extends Error {
  override name = "InformerStateError";
}

/**
 * One reflector's cache of a collection, shared by any number of handlers:
 *
 * - a {@link Reflector} (watch-list first, LIST + WATCH as fallback) fills a
 *   {@link DeltaFIFO}; the informer drains it into an indexed cache and turns
 *   each change into notifications;
 * - or any {@link InformerSource} fills that FIFO instead (option `source`),
 *   e.g. one reflector per owned shard range;
 * - every handler has its own unbounded buffer drained by its own loop, so a
 *   slow handler never delays another, and sees the changes in order;
 * - a handler added late is first handed every cached object as an add;
 * - deletions seen only through a relist arrive as
 *   {@link DeletedFinalStateUnknown} tombstones;
 * - per-handler resync periods, scheduled in quarter-second buckets on one
 *   jittered ticker ({@link ResyncScheduler});
 * - a {@link Lister} and named indexes (the namespace index by default).
 *
 * A {@link Runnable}: `run(signal)` lists, watches and delivers until the
 * signal aborts, and settles once everything it started has stopped; the
 * cache is kept. {@link SharedIndexInformer.waitForSync} is the
 * {@link Syncable} wait; {@link SharedIndexInformer.close} lets go of the
 * cache and handlers of an informer that is done with.
 *
 * ```ts
 * const informer = new SharedIndexInformer({
 *   listerWatcher: new KubeListerWatcher(kc, ConfigMaps), // SharedIndexInformer<V1ConfigMap>
 *   transform: stripManagedFields,
 * });
 * informer.addEventHandler({ onAdd: (cm) => console.log("added", cm.metadata?.name) });
 * const stop = new AbortController();
 * const running = informer.run(stop.signal);
 * if (await informer.waitForSync(AbortSignal.timeout(60_000))) informer.lister.namespace("default").list();
 * stop.abort();
 * await running;
 * ```
 */
export class SharedIndexInformer<T extends KubeObject = KubeObject> implements Runnable, Syncable {
  /** The informer's name in logs and metrics. */
  readonly name: string;
  /** The resource cached, as kubectl names it (`configmaps`, `deployments.apps`): for logs, metrics and errors. */
  readonly resource: string;
  /**
   * The typed handle of the resource cached (its group, version, kind,
   * plural and scope), from the options or the lister-watcher; `undefined`
   * when neither has one (a test fake, say). Its type is what makes a
   * `SharedIndexInformer<V1Pod>` no `SharedIndexInformer<V1ConfigMap>`.
   */
  readonly handle: Resource<T> | undefined;
  /** The namespace cached; absent for all namespaces or cluster-scoped resources. */
  readonly namespace: string | undefined;
  /** Reads the cache. */
  readonly lister: Lister<T>;
  /** Whether the cache keeps its objects compact (option `compact`). */
  readonly compact: boolean;

  private readonly cache: IndexedStore<T> | CompactStore<T>;
  private readonly fifo: DeltaFIFO<T>;
  /** What fills the FIFO: the informer's own reflector, or the external source of `options.source`. */
  private readonly source: Pick<InformerSource, "run" | "lastSyncResourceVersion" | "lastError" | "health">;
  /** The external source, whose sync is tracked here rather than by the FIFO; `undefined` with the own reflector. */
  private readonly external: InformerSource | undefined;
  /** Batches handled so far, and how many must be for an external source's snapshot to be handled. */
  private handled = 0;
  private syncTarget: number | undefined;
  private readonly scheduler: ResyncScheduler;
  private readonly logger: Logger;
  private readonly tracer: Tracer;
  private readonly metrics: InformerMetrics;
  private readonly logFields: LogFields;
  private readonly defaultResyncPeriodMs: number;
  private readonly handlers = new Map<HandlerDelivery<T>, ResyncSchedule | undefined>();
  /** `handlers`' deliveries and schedules as arrays, replaced on every change: what each object's handling walks. */
  private deliveries: HandlerDelivery<T>[] = [];
  private schedules: ResyncSchedule[] = [];
  private handlerSeq = 0;
  private state: "new" | "running" | "stopped" = "new";
  private synced = false;
  private readonly syncWaiters = new SyncWaiters();
  private syncSpan: Span | undefined;

  constructor(options: SharedIndexInformerOptions<T>) {
    const lw = options.listerWatcher;
    this.resource = lw.resource;
    this.handle = options.handle ?? lw.handle;
    this.namespace = lw.namespace;
    this.name = options.name ?? (lw.namespace ? `${lw.resource} in ${lw.namespace}` : lw.resource);
    const { clock, random, logger, meter, tracer } = resolveInstrumentation(options, "@tessera/informers");
    this.logger = logger;
    this.tracer = tracer;
    this.logFields = Object.freeze({
      informer: this.name,
      resource: this.resource,
      ...(this.namespace ? { namespace: this.namespace } : {}),
    });
    this.defaultResyncPeriodMs = options.defaultResyncPeriodMs ?? 0;
    this.scheduler = options.resyncScheduler ?? new ResyncScheduler({ clock, random, logger, meter, tracer });

    const indexers: Indexers<T> = {
      ...(options.namespaceIndex === false ? {} : { [NAMESPACE_INDEX]: indexByNamespace }),
      ...options.indexers,
    };
    const compact = options.compact;
    this.compact = compact !== undefined && compact !== false;
    this.cache = compact
      ? new CompactStore<T>({ ...(compact === true ? {} : compact), indexers })
      : new IndexedStore<T>({ indexers });
    this.lister = new Lister(this.cache);
    this.fifo = new DeltaFIFO<T>({ knownObjects: this.cache });
    const fifo = this.fifo;
    if (options.source) {
      const transform = options.transform;
      const t = transform ?? ((obj: T) => obj);
      const external = options.source({
        add: (obj) => fifo.add(t(obj)),
        update: (obj) => fifo.update(t(obj)),
        // A tombstone carries the last state already cached (transformed then).
        delete: (obj) => fifo.delete(obj instanceof DeletedFinalStateUnknown ? obj : t(obj)),
        replace: (items, rv) => fifo.replace(transform ? items.map(t) : items, rv),
      });
      this.external = external;
      this.source = external;
    } else {
      // The reflector writes into the FIFO; a replace can complete the sync without a single pop (an empty list).
      const store: ReflectorStore<T> = {
        add: (obj) => fifo.add(obj),
        update: (obj) => fifo.update(obj),
        delete: (obj) => fifo.delete(obj),
        replace: (items, rv) => {
          fifo.replace(items, rv);
          this.checkSynced();
        },
        beginReplace: () => this.beginReplace(),
      };
      const reflector = new Reflector<T>({
        ...options.reflector,
        listerWatcher: lw,
        store,
        name: this.name,
        clock,
        random,
        logger,
        meter,
        // Unless one is given, the reflector traces under its own package's name.
        ...(options.tracer ? { tracer: options.tracer } : {}),
        ...(options.transform ? { transform: options.transform } : {}),
        ...(options.onError ? { onError: options.onError } : {}),
      });
      this.external = undefined;
      this.source = reflector;
    }
    this.metrics = new InformerMetrics(
      meter,
      { informer: this.name, resource: this.resource, cache: options.cache ?? "own" },
      {
        cachedObjects: () => this.cache.size,
        handlerDepths: () => Array.from(this.handlers.keys(), (h) => [h.name, h.pending] as const),
      },
    );
  }

  /** True once the cache holds a complete snapshot and every change it queued has been handled. Stays true. */
  hasSynced(): boolean {
    return this.synced;
  }

  /**
   * Resolves `true` once {@link SharedIndexInformer.hasSynced} is true;
   * `false` if `signal` aborts first or the informer stops (or is closed)
   * without having synced. Never rejects. Before {@link SharedIndexInformer.run}
   * it waits for the run.
   */
  waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    if (this.state === "stopped") return Promise.resolve(false);
    return this.syncWaiters.wait(signal);
  }

  /** Whether {@link SharedIndexInformer.run} was called and has not ended. */
  get isRunning(): boolean {
    return this.state === "running";
  }

  /** Whether the informer ran and stopped; it cannot run again. */
  get isStopped(): boolean {
    return this.state === "stopped";
  }

  /** The resourceVersion the cache is at, `""` before the first sync. */
  get lastSyncResourceVersion(): string {
    return this.source.lastSyncResourceVersion;
  }

  /** The last failure of a list or watch, `undefined` if none yet. */
  get lastError(): unknown {
    return this.source.lastError;
  }

  /**
   * Whether its reflector (or source) hears from the server: unhealthy when
   * nothing has arrived past the watch's inactivity deadline (see
   * `Reflector.health`); what a manager's `/healthz` reports.
   */
  health(): ReflectorHealth {
    return this.source.health?.() ?? { healthy: true };
  }

  /** The registered handlers. */
  get handlerCount(): number {
    return this.handlers.size;
  }

  /** The index functions, by name. */
  getIndexers(): Indexers<T> {
    return this.cache.getIndexers();
  }

  /** Adds index functions; cached objects are indexed at once. A name in use throws an `IndexerError`. */
  addIndexers(indexers: Indexers<T>): void {
    this.cache.addIndexers(indexers);
  }

  /**
   * Registers `handler`. It is handed the objects cached right now as adds
   * (`isInInitialList` true), then every change, in order, through a buffer
   * of its own.
   */
  addEventHandler(handler: ResourceEventHandler<T>, options: EventHandlerOptions = {}): HandlerRegistration {
    const name = options.name ?? `handler-${++this.handlerSeq}`;
    const delivery: HandlerDelivery<T> = new HandlerDelivery<T>(name, handler, {
      informer: this.name,
      resource: this.resource,
      informerSynced: () => this.synced,
      onClose: () => this.removeDelivery(delivery),
      logger: this.logger,
      metrics: this.metrics.forHandler(name),
    });
    const period = options.resyncPeriodMs ?? this.defaultResyncPeriodMs;
    const schedule =
      period > 0 && this.state !== "stopped"
        ? this.scheduler.schedule(period, (keys) => this.resync(delivery, keys), `${this.name}/${name}`)
        : undefined;
    this.handlers.set(delivery, schedule);
    this.handlersChanged();
    for (const key of this.cache.listKeys()) {
      const obj = this.cache.getByKey(key) as T;
      delivery.push({ type: "add", object: obj, isInInitialList: true });
      schedule?.track(key);
    }
    this.logger.debug("event handler added", {
      ...this.logFields,
      handler: name,
      existing: this.cache.size,
      resyncPeriodMs: period,
    });
    return delivery;
  }

  /** Removes a handler (the same as `registration.close()`). */
  removeEventHandler(registration: HandlerRegistration): void {
    registration.close();
  }

  /**
   * Runs the reflector (or the source) and the processing loop until
   * `signal` aborts; resolves once both stopped. The cache and the handlers
   * are kept. Rejects only when the reflector or source does (e.g. its
   * consistency check failed). An informer runs once: a second call throws
   * {@link InformerStateError} (synchronously).
   */
  run(signal: AbortSignal): Promise<void> {
    if (this.state !== "new") {
      throw new InformerStateError(
        `informer ${this.name} ${this.state === "running" ? "is running" : "has stopped"}`,
      );
    }
    this.state = "running";
    return this.runLoops(signal);
  }

  /**
   * Lets go of what the informer holds: every handler is closed (what waits
   * for it is dropped) and the cache is emptied, so nothing stays referenced
   * through an informer that is done with, even where someone still holds
   * it. It cannot run afterwards. Not a way to stop it: abort the signal
   * given to {@link SharedIndexInformer.run} and await the run first; while
   * it runs, `close` throws {@link InformerStateError}. Closing twice is harmless.
   */
  close(): void {
    if (this.state === "running") {
      throw new InformerStateError(
        `informer ${this.name} is running: abort its run's signal before closing it`,
      );
    }
    this.finish();
    for (const delivery of Array.from(this.handlers.keys())) delivery.close();
    this.cache.replace([], "");
  }

  private async runLoops(signal: AbortSignal): Promise<void> {
    const failed = new AbortController();
    const stop = AbortSignal.any([signal, failed.signal]);
    this.syncSpan = this.tracer.startSpan("informer.sync", {
      attributes: { "tessera.informer": this.name, "k8s.resource": this.resource },
    });
    this.logger.info("informer starting", this.logFields);
    let reflectorError: unknown;
    const reflectorDone = this.source.run(stop).catch((err: unknown) => {
      reflectorError = err;
      failed.abort(err);
    });
    if (this.external) {
      void this.external.waitForSync(stop).then((synced) => {
        if (!synced || stop.aborted) return;
        // Everything queued now is part of (or newer than) the snapshot; keys leave the FIFO in
        // order, so the snapshot is handled once these many more batches have been.
        this.syncTarget = this.handled + this.fifo.length;
        this.checkSynced();
      });
    }
    try {
      await this.processLoop(stop);
      await reflectorDone;
    } finally {
      this.finish();
    }
    if (reflectorError !== undefined) throw toError(reflectorError);
  }

  private async processLoop(stop: AbortSignal): Promise<void> {
    const process = (batch: DeltaBatch<T>): void => this.handleBatch(batch);
    while (!stop.aborted) {
      // What is queued already is handled key after key without a wait each (a sync queues every
      // object at once); after a run of them the loop lets the stream and the handlers go on. Nothing
      // in a run can abort `stop` (handlers are called later), so it is read once per run: reading a
      // combined signal's state costs more than handling a key.
      let run = 0;
      while (run < PROCESS_RUN_BEFORE_YIELD && this.fifo.popSync(process)) {
        run++;
        if (!this.synced) this.checkSynced();
      }
      if (run === PROCESS_RUN_BEFORE_YIELD) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        continue;
      }
      if (stop.aborted || !(await this.fifo.pop(process, stop))) break;
      if (!this.synced) this.checkSynced();
    }
  }

  private finish(): void {
    if (this.state === "stopped") return;
    this.state = "stopped";
    this.fifo.close();
    for (const schedule of this.handlers.values()) schedule?.close();
    this.metrics.close();
    if (!this.synced) {
      this.syncWaiters.settle(false);
      for (const delivery of this.handlers.keys()) delivery.informerStopped();
    }
    if (this.syncSpan) {
      if (!this.synced) {
        this.syncSpan.setStatus({ code: SpanStatusCode.ERROR, message: "stopped before the cache synced" });
      }
      this.syncSpan.end();
      this.syncSpan = undefined;
    }
    this.logger.info("informer stopped", {
      ...this.logFields,
      synced: this.synced,
      objects: this.cache.size,
    });
  }

  /**
   * A first sync (nothing cached, nothing queued) of a plain cache is filed into a staged cache
   * as its objects arrive, not queued in the FIFO after the end bookmark and popped one by one:
   * at the bookmark the cache takes it at once, and every handler is handed its adds in the same
   * order, as popping them would have. Nothing of it is visible before; a sync that fails drops
   * it. Otherwise (a relist, whose objects are compared with the cache's; a compact cache) the
   * reflector collects the list and replaces through the FIFO.
   */
  private beginReplace(): StagedReplace<T> | undefined {
    const cache = this.cache;
    if (!(cache instanceof IndexedStore) || cache.size > 0 || this.fifo.length > 0) return undefined;
    const staged = cache.beginReplace();
    return {
      add: (obj) => staged.add(obj),
      abort: () => staged.abort(),
      commit: (rv) => {
        if (cache.size > 0 || this.fifo.length > 0) {
          // Filed or queued since the staging began (nothing in this informer does that): through the FIFO.
          const items = Array.from(staged.entries(), ([, obj]) => obj);
          staged.abort();
          this.fifo.replace(items, rv);
          this.checkSynced();
          return;
        }
        const isInInitialList = !this.fifo.hasSynced();
        // The FIFO takes its (empty) replace first, while the cache is empty and so nothing is missing
        // from the list; that marks it populated (a first sync) with nothing to wait for.
        this.fifo.replace([], rv);
        staged.commit(rv);
        const schedules = this.schedules;
        for (const [key, obj] of staged.entries()) {
          this.handled++;
          for (const schedule of schedules) schedule.track(key);
          this.distribute({ type: "add", object: obj, isInInitialList });
        }
        this.checkSynced();
      },
    };
  }

  /** Applies one key's deltas to the cache and notifies every handler. */
  private handleBatch(batch: DeltaBatch<T>): void {
    const key = batch.key;
    const isInInitialList = this.external ? !this.synced : batch.isInInitialList;
    this.handled++;
    for (const delta of batch.deltas) {
      // Whether it is cached, and its version, are read without decoding it (a compact cache).
      const cached = this.cache.has(key);
      if (delta.type === "Deleted") {
        if (!cached) continue; // never cached, so no handler saw it
        this.cache.delete(delta.object);
        for (const schedule of this.schedules) schedule.untrack(key);
        this.distribute({ type: "delete", object: delta.object });
        continue;
      }
      const obj = delta.object instanceof DeletedFinalStateUnknown ? delta.object.obj : delta.object;
      // The batch's key is the cache's key for the object (both key by metaNamespaceKey): not computed again.
      if (!cached) {
        this.cache.setByKey(key, obj);
        for (const schedule of this.schedules) schedule.track(key);
        this.distribute({ type: "add", object: obj, isInInitialList });
        continue;
      }
      // A relist re-delivers objects unchanged since: nothing happened to them.
      if ((delta.type === "Replaced" || delta.type === "Sync") && this.cachedVersionIs(key, obj)) continue;
      const old = this.cache.getByKey(key) as T;
      this.cache.setByKey(key, obj);
      this.distribute({ type: "update", oldObject: old, newObject: obj, resync: false });
    }
  }

  /** Whether the object cached under `key` has `obj`'s resourceVersion. */
  private cachedVersionIs(key: string, obj: T): boolean {
    const rv =
      this.cache instanceof CompactStore
        ? this.cache.metadataOf(key)?.resourceVersion
        : this.cache.getByKey(key)?.metadata?.resourceVersion;
    return rv !== undefined && rv === obj.metadata?.resourceVersion;
  }

  private distribute(notification: Notification<T>): void {
    const deliveries = this.deliveries;
    for (let i = 0; i < deliveries.length; i++) (deliveries[i] as HandlerDelivery<T>).push(notification);
  }

  private resync(delivery: HandlerDelivery<T>, keys: readonly string[]): void {
    for (const key of keys) {
      const obj = this.cache.getByKey(key);
      if (obj !== undefined) delivery.push({ type: "update", oldObject: obj, newObject: obj, resync: true });
    }
  }

  private removeDelivery(delivery: HandlerDelivery<T>): void {
    const schedule = this.handlers.get(delivery);
    schedule?.close();
    this.handlers.delete(delivery);
    this.handlersChanged();
    this.logger.debug("event handler removed", { ...this.logFields, handler: delivery.name });
  }

  private handlersChanged(): void {
    this.deliveries = Array.from(this.handlers.keys());
    this.schedules = Array.from(this.handlers.values()).filter((s) => s !== undefined);
  }

  private checkSynced(): void {
    if (this.synced) return;
    if (
      this.external ? this.syncTarget === undefined || this.handled < this.syncTarget : !this.fifo.hasSynced()
    ) {
      return;
    }
    this.synced = true;
    this.syncSpan?.setAttribute("tessera.items", this.cache.size);
    this.syncSpan?.end();
    this.syncSpan = undefined;
    this.logger.info("informer synced", {
      ...this.logFields,
      objects: this.cache.size,
      resourceVersion: this.source.lastSyncResourceVersion,
    });
    this.syncWaiters.settle(true);
    for (const delivery of this.handlers.keys()) delivery.checkSynced();
  }
}
