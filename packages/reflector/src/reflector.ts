import { SpanStatusCode, type Span, type Tracer } from "@opentelemetry/api";
import {
  Backoff,
  resolveInstrumentation,
  sleep,
  toError,
  type BackoffOptions,
  type Clock,
  type Instrumentation,
  type LogFields,
  type Logger,
  type RandomSource,
  type Runnable,
  type Syncable,
} from "@tessera/core";
import { compareWithList, objectVersion, type SnapshotVersions } from "./consistency-check.js";
import type { KubeObject } from "@tessera/client";
import type { ListerWatcher } from "./lister-watcher.js";
import type { WatchOptions } from "./list-options.js";
import {
  ApiStatusError,
  isResourceExpired,
  ListWatchError,
  WatchDeadlineError,
  WatchListInconsistencyError,
  type ListWatchErrorContext,
} from "./list-watch-error.js";
import { metaNamespaceKey, type KeyFunc } from "./object-key.js";
import { choosePageSize, listAllPages } from "./pager.js";
import { ReflectorMetrics, type SyncMode } from "./reflector-metrics.js";
import type { ReflectorStore, StagedReplace } from "./store.js";
import { isInitialEventsEndBookmark, type WatchEvent } from "./watch-event.js";
import { WatchSession, type WatchOutcome } from "./watch-session.js";

/** The floor (and default) of the watch timeout range, in seconds: [min, 2 x min). */
export const MIN_WATCH_TIMEOUT_SECONDS = 300;

/** A watch that ends cleanly this soon without a single event is treated as a failure (and backed off). */
const SHORT_WATCH_MS = 1000;

/**
 * Options of a {@link Reflector}. Its clock, random source, logger, meter and
 * tracer ({@link Instrumentation}) default to the system clock,
 * `Math.random`, the silent logger and the global `@tessera/reflector` meter
 * and tracer.
 */
export interface ReflectorOptions<T extends KubeObject> extends Instrumentation {
  /** Where the collection comes from. */
  listerWatcher: ListerWatcher<T>;
  /** Where it goes: an {@link IndexedStore}, a {@link DeltaFIFO}, or any {@link ReflectorStore}. */
  store: ReflectorStore<T>;
  /** Names the reflector in logs and metrics; default the resource (and namespace). */
  name?: string;
  /**
   * Sync by watch-list (one WATCH with `sendInitialEvents`) first, falling
   * back to LIST + WATCH when the server cannot; `false` goes straight to
   * LIST + WATCH. Default: `true`.
   */
  watchList?: boolean;
  /**
   * A page size for LISTs. Unset, the reflector follows client-go's rules
   * ({@link choosePageSize}). Set, it is used for every LIST, which forces
   * every LIST to be served by etcd: only for servers without a watch cache.
   */
  pageSize?: number;
  /** Watches time out after a uniform random time in [min, 2 x min) seconds; values under 300 are raised to 300. */
  minWatchTimeoutSeconds?: number;
  /**
   * A watch is abandoned (and resumed) when nothing at all arrived for its
   * server timeout plus this margin, so a half-open connection is noticed;
   * default 30 s.
   */
  inactivityMarginMs?: number;
  /**
   * The initial phase of a watch-list may go this long without an event
   * (including before the first) before the server is taken not to support
   * watch-list; default 60 s.
   */
  initialEventsTimeoutMs?: number;
  /** Backoff between failed attempts; default 800 ms x2 up to 30 s, jitter 1.0, reset after 2 min. */
  backoff?: BackoffOptions;
  /**
   * A resourceVersion at which the store already holds this reflector's whole
   * collection, as the server had it then: e.g. objects inherited from a
   * reflector over a wider shard range that was just stopped at that
   * resourceVersion. With it the reflector makes no initial sync: it counts
   * as synced from construction ({@link Reflector.hasSynced} true,
   * {@link Reflector.lastSyncResourceVersion} this value,
   * {@link Reflector.lastSyncMode} `"resumed"`) and its first request is a
   * plain WATCH from here (no `sendInitialEvents`). From then on it behaves as
   * usual: a watch that ends or fails resumes from the last resourceVersion,
   * and a 410 relists, replacing the store.
   *
   * The store is not touched until that first event or relist, so it must
   * already hold exactly the objects this reflector's selector matches (an
   * object it does not match stays until the next relist replaces the store),
   * and a store whose own `hasSynced` waits for a first write (a
   * {@link DeltaFIFO}) reports synced only once an event or a relist comes. Only
   * the first {@link Reflector.run} resumes; a later one syncs first. Must be
   * a resourceVersion the server sent; `"0"` (any version) is refused. `""` or
   * unset: sync first, as usual.
   */
  resumeFrom?: string;
  /** Applied to every object before it is stored (e.g. to drop `managedFields`); must keep name, namespace, uid and resourceVersion. */
  transform?: (obj: T) => T;
  /** How objects are keyed in the watch-list snapshot and the consistency check; default `namespace/name`. */
  keyFunc?: KeyFunc<T>;
  /**
   * After each watch-list sync, LIST at the synced resourceVersion and fail
   * loudly (error log, metric, and `run()` rejects with a
   * {@link WatchListInconsistencyError}) if the two differ. It costs one
   * extra LIST per sync: for tests and CI, not production. Default: `false`.
   */
  consistencyCheck?: boolean;
  /** Called with every failed list or watch (after it was logged); the reflector retries on its own. */
  onError?: (err: unknown) => void;
}

/** Raised by {@link Reflector.run} when called while a run is already going on. */
export class ReflectorRunningError extends Error {
  override name = "ReflectorRunningError";
}

/**
 * Keeps a {@link ReflectorStore} in step with one collection on the server,
 * the way client-go's reflector does:
 *
 * - watch-list first: one WATCH with `sendInitialEvents=true`; the initial
 *   ADDED events are held aside (or staged into a store that can stage a
 *   replace, {@link ReflectorStore.beginReplace}, as they arrive), the store
 *   is replaced atomically on the `k8s.io/initial-events-end` bookmark, and
 *   the same stream goes on with live events; a sync that fails leaves the
 *   store as it was;
 * - if that fails or the server does not support it: LIST (paginated by
 *   client-go's rules) + WATCH for this attempt, logged and counted; a server
 *   that rejects watch-list (400, 422, 501) or sends no end bookmark in time is
 *   not asked again by this reflector;
 * - the resourceVersion of every event, bookmarks included, is where the next
 *   watch resumes; a watch that ends cleanly resumes at once without a relist;
 *   a 410 relists; other failures back off and resume;
 * - every watch carries a jittered `timeoutSeconds` and an inactivity deadline.
 *
 * ```ts
 * const store = new IndexedStore<V1ConfigMap>();
 * const reflector = new Reflector({ listerWatcher: new KubeListerWatcher(kc, configMaps), store });
 * const stop = new AbortController();
 * const done = reflector.run(stop.signal);
 * if (await reflector.waitForSync(stop.signal)) {
 *   // ... store.list() ...
 * }
 * stop.abort();
 * await done;
 * ```
 */
export class Reflector<T extends KubeObject = KubeObject> implements Runnable, Syncable {
  /** The reflector's name in logs and metrics. */
  readonly name: string;
  private readonly lw: ListerWatcher<T>;
  private readonly store: ReflectorStore<T>;
  private readonly clock: Clock;
  private readonly random: RandomSource;
  private readonly logger: Logger;
  private readonly tracer: Tracer;
  private readonly metrics: ReflectorMetrics;
  private readonly backoff: Backoff;
  private readonly keyOf: KeyFunc<T>;
  private readonly transform: ((obj: T) => T) | undefined;
  private readonly onError: ((err: unknown) => void) | undefined;
  private readonly useWatchList: boolean;
  private readonly userPageSize: number | undefined;
  private readonly minWatchTimeoutSeconds: number;
  private readonly inactivityMarginMs: number;
  private readonly initialEventsTimeoutMs: number;
  private readonly consistencyCheck: boolean;
  private readonly logFields: LogFields;

  private lastSyncRV = "";
  private rvUnavailable = false;
  private paginatedResult = false;
  private synced = false;
  private syncs = 0;
  private syncMode: SyncMode | undefined;
  private watchListUnsupported = false;
  private lastFallbackReason: string | undefined;
  private relistReason = "initial";
  private resumePending = false;
  private running = false;
  /** Whether a run ended and no other began since: a wait for the sync then has nothing to wait for. */
  private stopped = false;
  /** The pending {@link Reflector.waitForSync} calls. */
  private readonly syncWaiters = new Set<(synced: boolean) => void>();
  private fatal: WatchListInconsistencyError | undefined;
  private fatalAbort: AbortController | undefined;
  private runSignal: AbortSignal | undefined;
  private lastErr: unknown;
  /** `clock.now()` of the last sign the server is being heard: a sync, an event, a watch that ended normally. */
  private lastProgress = 0;
  private readonly pendingChecks = new Set<Promise<void>>();

  constructor(options: ReflectorOptions<T>) {
    this.lw = options.listerWatcher;
    this.store = options.store;
    const where = this.lw.namespace ? ` in ${this.lw.namespace}` : "";
    this.name = options.name ?? `${this.lw.resource}${where}`;
    const { clock, random, logger, meter, tracer } = resolveInstrumentation(options, "@tessera/reflector");
    this.clock = clock;
    this.random = random;
    this.logger = logger;
    this.tracer = tracer;
    this.metrics = new ReflectorMetrics(meter, this.name, this.lw.resource);
    this.backoff = new Backoff(this.clock, this.random, options.backoff);
    this.keyOf = options.keyFunc ?? ((obj: T) => metaNamespaceKey(obj));
    this.transform = options.transform;
    this.onError = options.onError;
    this.useWatchList = options.watchList ?? true;
    this.userPageSize = options.pageSize;
    this.minWatchTimeoutSeconds = Math.max(
      MIN_WATCH_TIMEOUT_SECONDS,
      options.minWatchTimeoutSeconds ?? MIN_WATCH_TIMEOUT_SECONDS,
    );
    this.inactivityMarginMs = options.inactivityMarginMs ?? 30_000;
    this.initialEventsTimeoutMs = options.initialEventsTimeoutMs ?? 60_000;
    this.consistencyCheck = options.consistencyCheck ?? false;
    this.logFields = Object.freeze({
      reflector: this.name,
      resource: this.lw.resource,
      ...(this.lw.namespace ? { namespace: this.lw.namespace } : {}),
    });
    const resumeFrom = options.resumeFrom ?? "";
    if (resumeFrom === "0") {
      throw new RangeError(
        `reflector ${this.name}: resumeFrom "0" names no point in time; give a resourceVersion the server sent`,
      );
    }
    if (resumeFrom !== "") {
      this.lastSyncRV = resumeFrom;
      this.synced = true;
      this.syncs = 1;
      this.syncMode = "resumed";
      this.resumePending = true;
    }
  }

  /** True once the store was first filled with a complete snapshot (from construction, given `resumeFrom`); stays true. */
  hasSynced(): boolean {
    return this.synced;
  }

  /**
   * Resolves `true` once {@link Reflector.hasSynced} is (at once if it
   * already is), or `false` when `signal` aborts or the run ends first (or
   * has ended, unsynced, before the call). A wait begun before
   * {@link Reflector.run} waits for the run. Never rejects.
   */
  waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    if (signal?.aborted || this.stopped) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const onAbort = (): void => done(false);
      const done = (synced: boolean): void => {
        this.syncWaiters.delete(done);
        signal?.removeEventListener("abort", onAbort);
        resolve(synced);
      };
      this.syncWaiters.add(done);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /**
   * The resourceVersion the store is known to be at: of the last sync, event
   * or bookmark (or `resumeFrom`); `""` before the first sync.
   */
  get lastSyncResourceVersion(): string {
    return this.lastSyncRV;
  }

  /** How the last sync was made, `undefined` before the first. */
  get lastSyncMode(): SyncMode | undefined {
    return this.syncMode;
  }

  /** Whether the next sync will try watch-list (on, and the server has not shown it lacks it). */
  get watchListEnabled(): boolean {
    return this.useWatchList && !this.watchListUnsupported;
  }

  /** The last failure of a list or watch, `undefined` if none yet. */
  get lastError(): unknown {
    return this.lastErr;
  }

  /**
   * Whether the reflector is hearing from the server: unhealthy when, while
   * running, nothing (no sync, event, bookmark, or normally ended watch) has
   * arrived for longer than the longest watch's inactivity deadline, e.g.
   * every list and watch has been failing since. A process in that state is
   * alive but deaf; a liveness probe on this restarts it.
   */
  health(): ReflectorHealth {
    if (!this.running) return { healthy: true };
    const silentMs = this.clock.now() - this.lastProgress;
    const limitMs = this.inactivityLimitMs(2 * this.minWatchTimeoutSeconds);
    if (silentMs <= limitMs) return { healthy: true };
    return {
      healthy: false,
      reason:
        `reflector ${this.name}: nothing heard from the server for ${Math.round(silentMs / 1000)} s ` +
        `(limit ${Math.round(limitMs / 1000)} s)` +
        (this.lastErr !== undefined ? `; last error: ${errorMessage(this.lastErr)}` : ""),
    };
  }

  /**
   * Lists and watches until `signal` aborts, retrying every failure. Resolves
   * once stopped (the open request closed). Rejects only when the consistency
   * check finds a watch-list snapshot wrong.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.running) throw new ReflectorRunningError(`reflector ${this.name} is already running`);
    this.running = true;
    this.stopped = false;
    this.lastProgress = this.clock.now();
    const fatalAbort = new AbortController();
    this.fatalAbort = fatalAbort;
    const stop = AbortSignal.any([signal, fatalAbort.signal]);
    this.runSignal = stop;
    this.logger.debug("reflector starting", { ...this.logFields, watchList: this.watchListEnabled });
    try {
      while (!stop.aborted) {
        try {
          await this.listAndWatch(stop);
        } catch (err) {
          if (stop.aborted) break;
          const previous = this.lastErr;
          this.report(err);
          if (isResourceExpired(err) || isTooLargeResourceVersion(err)) {
            // A 410 is an answer: the server is back. The relist it asks for waits the first
            // delay, not one grown while the server could not be reached (client-go waits the
            // grown one, which after a short API server restart held caches back over a minute
            // in the fault soak). 410s in a row still grow it, so a relist that keeps missing
            // the compaction window backs off.
            if (!isResourceExpired(previous) && !isTooLargeResourceVersion(previous)) this.backoff.reset();
            this.rvUnavailable = true;
            this.relistReason = "expired";
          } else {
            this.relistReason = "error";
          }
          await sleep(this.clock, this.backoff.next(), stop);
        }
      }
      await Promise.allSettled(this.pendingChecks);
    } finally {
      this.running = false;
      this.stopped = true;
      this.fatalAbort = undefined;
      this.runSignal = undefined;
      this.settleSyncWaiters(this.synced);
      this.logger.debug("reflector stopped", this.logFields);
    }
    if (this.fatal !== undefined) {
      const fatal = this.fatal;
      this.fatal = undefined;
      throw fatal;
    }
  }

  /** One sync (watch-list, or LIST on fallback) followed by watching until an error needs a relist. */
  private async listAndWatch(signal: AbortSignal): Promise<void> {
    if (this.resumePending) {
      // The store is already complete at resumeFrom: watch from there, and sync only if a 410 says so.
      this.resumePending = false;
      this.logger.info("store taken as synced; watching without a sync", {
        ...this.logFields,
        mode: "resumed",
        resourceVersion: this.lastSyncRV,
      });
      await this.watchLoop(undefined, signal);
      return;
    }
    let live: WatchSession<T> | undefined;
    if (this.watchListEnabled) {
      live = await this.watchList(signal);
      if (signal.aborted) {
        live?.abort(signal.reason);
        return;
      }
    }
    if (!live) await this.list(signal);
    await this.watchLoop(live, signal);
  }

  /**
   * Opens a watch-list and waits for its initial events to end. Resolves the
   * session (its stream still open, now delivering live events) once the store
   * was replaced, or `undefined` after falling back (the session discarded).
   */
  private async watchList(signal: AbortSignal): Promise<WatchSession<T> | undefined> {
    const started = this.clock.now();
    const resourceVersion = this.rvUnavailable ? "" : this.lastSyncRV;
    const timeoutSeconds = this.watchTimeoutSeconds();
    const options: WatchOptions = {
      sendInitialEvents: true,
      allowWatchBookmarks: true,
      resourceVersionMatch: "NotOlderThan",
      resourceVersion,
      timeoutSeconds,
    };
    const span = this.tracer.startSpan("reflector.watchList", {
      attributes: {
        "tessera.reflector": this.name,
        "k8s.resource": this.lw.resource,
        "k8s.resource_version": resourceVersion,
      },
    });
    // The snapshot so far. Only ADDED events may come before the end bookmark (anything else ends the
    // attempt), so a list is enough; a key sent twice is resolved by the store's replace (the later wins).
    // A store that can stage a replace files each object as it comes instead, and publishes them all at
    // the bookmark; the list is then kept only for the consistency check.
    let staged: StagedReplace<T> | undefined = this.store.beginReplace?.();
    let temporary: T[] | undefined = staged === undefined || this.consistencyCheck ? [] : undefined;
    let count = 0;
    let initial = true;
    let unsupportedEvent: string | undefined;
    let bookmarkSeen = false;
    let endOfInitialEvents!: () => void;
    const initialDone = new Promise<void>((resolve) => (endOfInitialEvents = resolve));
    const onEvent = (event: WatchEvent<T>): void => {
      this.metrics.event(event.type);
      if (!initial) {
        this.apply(event);
        return;
      }
      const obj = event.object;
      switch (event.type) {
        case "ADDED": {
          const item = this.transform ? this.transform(obj) : obj;
          staged?.add(item);
          temporary?.push(item);
          count++;
          return;
        }
        case "BOOKMARK":
          if (!isInitialEventsEndBookmark(event)) return;
          break;
        case "MODIFIED":
        case "DELETED":
        default:
          // A server honouring sendInitialEvents sends only ADDED before the end bookmark:
          // this one ignored the parameters and is watching from "now".
          unsupportedEvent = event.type;
          throw new ListWatchError(
            this.context("watch"),
            0,
            "WatchListUnsupported",
            `a ${event.type} event came before the end of the initial events`,
          );
      }
      const rv = obj.metadata?.resourceVersion ?? "";
      const items = temporary;
      const staging = staged;
      initial = false;
      temporary = undefined;
      staged = undefined;
      bookmarkSeen = true;
      span.setAttribute("tessera.items", count);
      if (staging) staging.commit(rv);
      else this.store.replace(items ?? [], rv);
      this.completeSync("watch-list", rv, started, count, items);
      endOfInitialEvents();
    };
    this.metrics.watch("watch-list");
    const session = new WatchSession(this.lw, options, onEvent, this.clock, signal);
    session.setIdleDeadline(
      this.initialEventsTimeoutMs,
      () =>
        new WatchDeadlineError(this.context("watch"), "InitialEventsTimeout", this.initialEventsTimeoutMs),
    );
    const first = await Promise.race([initialDone.then(() => undefined), session.finished]);
    if (bookmarkSeen && !signal.aborted) {
      // The stream goes on (or, if it already ended, the watch loop resumes it).
      session.setIdleDeadline(this.inactivityLimitMs(timeoutSeconds), () =>
        this.inactivityError(timeoutSeconds),
      );
      span.end();
      return session;
    }
    // No end bookmark: what was staged is dropped, the store stays as it was.
    initial = false;
    temporary = undefined;
    staged?.abort();
    staged = undefined;
    session.abort(signal.reason);
    if (signal.aborted || first === undefined) {
      span.end();
      return undefined;
    }
    const error = first.error ?? this.endedBeforeBookmark(first);
    endSpan(span, error);
    this.fallBack(error, unsupportedEvent !== undefined);
    return undefined;
  }

  /** LISTs the collection (paged by {@link choosePageSize}) and replaces the store with it. */
  private async list(signal: AbortSignal): Promise<void> {
    const started = this.clock.now();
    const resourceVersion = this.relistResourceVersion();
    const pageSize = choosePageSize({
      userPageSize: this.userPageSize,
      paginatedResult: this.paginatedResult,
      resourceVersion,
    });
    const span = this.tracer.startSpan("reflector.list", {
      attributes: {
        "tessera.reflector": this.name,
        "k8s.resource": this.lw.resource,
        "k8s.resource_version": resourceVersion,
        "tessera.page_size": pageSize,
      },
    });
    const transform = this.transform;
    let result;
    try {
      result = await listAllPages(
        this.lw,
        { resourceVersion },
        pageSize,
        signal,
        transform ? (items) => items.map(transform) : undefined,
      );
    } catch (err) {
      if (!signal.aborted) {
        this.metrics.list("error", (this.clock.now() - started) / 1000, 1);
        this.metrics.error("list", reasonOf(err));
      }
      endSpan(span, err);
      throw err;
    }
    if (resourceVersion === "0" && result.paginated) this.paginatedResult = true;
    this.metrics.list("success", (this.clock.now() - started) / 1000, result.pages);
    span.setAttribute("tessera.items", result.items.length);
    span.setAttribute("tessera.pages", result.pages);
    this.store.replace(result.items, result.resourceVersion);
    this.completeSync("list", result.resourceVersion, started, result.items.length, undefined);
    span.end();
  }

  /** Watches from the last resourceVersion until a 410 (thrown, for a relist) or a stop. */
  private async watchLoop(live: WatchSession<T> | undefined, signal: AbortSignal): Promise<void> {
    let session = live;
    while (!signal.aborted) {
      if (!session) session = this.startWatch(signal);
      const outcome = await session.finished;
      session = undefined;
      if (signal.aborted) return;
      let error = outcome.error;
      if (error === undefined) {
        if (outcome.events > 0 || outcome.durationMs >= SHORT_WATCH_MS) {
          this.lastProgress = this.clock.now();
          this.logger.debug("watch ended; resuming", {
            ...this.logFields,
            events: outcome.events,
            resourceVersion: this.lastSyncRV,
          });
          continue;
        }
        error = new ListWatchError(
          this.context("watch"),
          0,
          "ShortWatch",
          `the server closed the watch after ${Math.round(outcome.durationMs)} ms without an event`,
        );
      }
      if (isResourceExpired(error) || isTooLargeResourceVersion(error)) throw error;
      this.report(error);
      await sleep(this.clock, this.backoff.next(), signal);
    }
  }

  private startWatch(signal: AbortSignal): WatchSession<T> {
    const timeoutSeconds = this.watchTimeoutSeconds();
    const options: WatchOptions = {
      resourceVersion: this.lastSyncRV,
      allowWatchBookmarks: true,
      timeoutSeconds,
    };
    this.metrics.watch("watch");
    const session = new WatchSession(
      this.lw,
      options,
      (event) => {
        this.metrics.event(event.type);
        this.apply(event);
      },
      this.clock,
      signal,
    );
    session.setIdleDeadline(this.inactivityLimitMs(timeoutSeconds), () =>
      this.inactivityError(timeoutSeconds),
    );
    return session;
  }

  /** Applies one live event to the store and records its resourceVersion. */
  private apply(event: WatchEvent<T>): void {
    const obj = event.object;
    switch (event.type) {
      case "ADDED":
        this.store.add(this.transform ? this.transform(obj) : obj);
        break;
      case "MODIFIED":
        this.store.update(this.transform ? this.transform(obj) : obj);
        break;
      case "DELETED":
        this.store.delete(this.transform ? this.transform(obj) : obj);
        break;
      case "BOOKMARK":
        break;
    }
    const rv = obj.metadata?.resourceVersion;
    if (rv) this.lastSyncRV = rv;
    this.lastProgress = this.clock.now();
  }

  private completeSync(
    mode: SyncMode,
    rv: string,
    started: number,
    items: number,
    snapshot: readonly T[] | undefined,
  ): void {
    if (this.syncs > 0) this.metrics.relist(this.relistReason);
    this.lastSyncRV = rv;
    this.rvUnavailable = false;
    this.synced = true;
    this.syncs++;
    this.lastProgress = this.clock.now();
    this.settleSyncWaiters(true);
    this.syncMode = mode;
    this.lastFallbackReason = mode === "watch-list" ? undefined : this.lastFallbackReason;
    const seconds = (this.clock.now() - started) / 1000;
    this.metrics.synced(mode, seconds);
    // Which wire the server answered in, where the lister-watcher tells (protobuf asked for, JSON for a custom resource).
    const wire = (this.lw as { lastWire?: string }).lastWire;
    this.logger.info("store synced", {
      ...this.logFields,
      mode,
      ...(wire ? { wire } : {}),
      resourceVersion: rv,
      ...(mode === "watch-list" ? { items } : {}),
      durationMs: Math.round(seconds * 1000),
    });
    if (mode === "watch-list" && snapshot && this.consistencyCheck) this.checkConsistency(rv, snapshot);
  }

  private settleSyncWaiters(synced: boolean): void {
    for (const done of Array.from(this.syncWaiters)) done(synced);
  }

  /** The consistency check, run beside the live stream; a difference stops the reflector. */
  private checkConsistency(rv: string, snapshot: readonly T[]): void {
    const versions: SnapshotVersions = new Map();
    for (const obj of snapshot) versions.set(this.keyOf(obj), objectVersion(obj));
    const abort = this.fatalAbort;
    const stop = this.runSignal;
    const check = compareWithList(this.lw, rv, versions, this.keyOf, stop).then(
      (differences) => {
        if (!differences) {
          this.logger.debug("watch-list consistency check passed", {
            ...this.logFields,
            resourceVersion: rv,
          });
          return;
        }
        const err = new WatchListInconsistencyError(this.context("list"), rv, differences);
        this.metrics.consistencyFailure();
        this.logger.error("WATCH-LIST CONSISTENCY CHECK FAILED", { ...this.logFields, error: err.message });
        this.onError?.(err);
        if (this.fatal === undefined) this.fatal = err;
        abort?.abort(err);
      },
      (err: unknown) => {
        if (stop?.aborted) return;
        this.logger.warn("watch-list consistency check could not list", {
          ...this.logFields,
          resourceVersion: rv,
          error: errorMessage(err),
        });
      },
    );
    this.pendingChecks.add(check);
    void check.finally(() => this.pendingChecks.delete(check));
  }

  private fallBack(error: unknown, unsupportedEvent: boolean): void {
    const reason = reasonOf(error);
    const rejected =
      unsupportedEvent ||
      reason === "InitialEventsTimeout" ||
      (error instanceof ApiStatusError &&
        error.source === "response" &&
        [400, 422, 501].includes(error.code));
    if (rejected) this.watchListUnsupported = true;
    if (isResourceExpired(error) || isTooLargeResourceVersion(error)) this.rvUnavailable = true;
    this.metrics.fallback(reason);
    const fields = {
      ...this.logFields,
      reason,
      error: errorMessage(error),
      watchListOff: rejected,
    };
    // Logged once per run of identical failures, so a server that keeps failing the same way is not noisy.
    if (this.lastFallbackReason !== reason) {
      this.logger.info(
        rejected
          ? "watch-list is not supported by the server; using LIST + WATCH from now on"
          : "watch-list failed; falling back to LIST + WATCH for this sync",
        fields,
      );
    } else {
      this.logger.debug("watch-list failed again; falling back to LIST + WATCH", fields);
    }
    this.lastFallbackReason = reason;
  }

  private endedBeforeBookmark(outcome: WatchOutcome): ListWatchError {
    return new ListWatchError(
      this.context("watch"),
      0,
      "NoInitialEventsEnd",
      `the watch-list stream ended after ${outcome.events} events without the initial-events-end bookmark`,
    );
  }

  private report(err: unknown): void {
    this.lastErr = err;
    const verb = err instanceof ListWatchError ? err.verb : "watch";
    this.metrics.error(verb, reasonOf(err));
    const fields = { ...this.logFields, error: errorMessage(err), reason: reasonOf(err) };
    if (isResourceExpired(err)) this.logger.info("resourceVersion expired; relisting", fields);
    else this.logger.warn(`${verb} failed; retrying with backoff`, fields);
    this.onError?.(err);
  }

  /** client-go's rule: "" after a 410, "0" (any cached state) before the first sync, else the last RV. */
  private relistResourceVersion(): string {
    if (this.rvUnavailable) return "";
    return this.lastSyncRV === "" ? "0" : this.lastSyncRV;
  }

  private watchTimeoutSeconds(): number {
    const min = this.minWatchTimeoutSeconds;
    return Math.floor(min + this.random() * min);
  }

  private inactivityLimitMs(timeoutSeconds: number): number {
    return timeoutSeconds * 1000 + this.inactivityMarginMs;
  }

  private inactivityError(timeoutSeconds: number): WatchDeadlineError {
    return new WatchDeadlineError(
      this.context("watch"),
      "InactivityTimeout",
      this.inactivityLimitMs(timeoutSeconds),
    );
  }

  private context(verb: "list" | "watch"): ListWatchErrorContext {
    return this.lw.namespace === undefined
      ? { resource: this.lw.resource, verb }
      : { resource: this.lw.resource, verb, namespace: this.lw.namespace };
  }
}

function isTooLargeResourceVersion(err: unknown): boolean {
  return (
    err instanceof ApiStatusError &&
    (err.status?.details?.causes ?? []).some((c) => c.reason === "ResourceVersionTooLarge")
  );
}

function reasonOf(err: unknown): string {
  if (err instanceof ListWatchError) return err.reason;
  if (err instanceof Error) return err.name;
  return "Unknown";
}

function endSpan(span: Span, err: unknown): void {
  if (err !== undefined) {
    span.recordException(toError(err));
    span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(err) });
  }
  span.end();
}

/** What {@link Reflector.health} answers. */
export interface ReflectorHealth {
  readonly healthy: boolean;
  /** Why not, when not. */
  readonly reason?: string;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
