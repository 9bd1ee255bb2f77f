import { SpanStatusCode, type Tracer } from "@opentelemetry/api";
import {
  resolveInstrumentation,
  toError,
  withFields,
  type Clock,
  type Instrumentation,
  type Logger,
} from "@tessera/core";
import type { HandlerRegistration, SharedIndexInformer } from "@tessera/informers";
import { DeletedFinalStateUnknown } from "@tessera/reflector";
import { metadataOf, type KubeObject, type Reader } from "@tessera/client";
import {
  defaultControllerRateLimiter,
  LOW_PRIORITY,
  NORMAL_PRIORITY,
  RequeueAfterError,
  TerminalError,
  isTerminalError,
  WorkItemTimeoutError,
  WorkQueue,
  WorkerPool,
  type RateLimiter,
  type WorkContext,
  type WorkerPoolOutcome,
  type WorkerPoolRunOptions,
  type WorkResult,
} from "@tessera/workqueue";
import type { MapContext, MapToRequests } from "../handler/event-handler.js";
import { admits, type Predicate } from "../predicate/predicate.js";
import { ControllerMetrics, isPanic } from "./controller-metrics.js";
import { FailureLog } from "./failure-log.js";
import type { ManagedFinalizer } from "./managed-finalizer.js";
import type { Reconciler, ReconcileContext } from "./reconciler.js";
import type { Result } from "./result.js";
import type { ErrorResult } from "./error-result.js";
import { requestFromKey, requestKey, type Request } from "./request.js";
import { RelatedObjects } from "./related-objects.js";
import { consumeTrigger, requestProblem, type TriggerDeclaration } from "./trigger-source.js";

/** One informer feeding the controller's queue, and how its objects become requests. */
export interface ControllerSource {
  readonly informer: SharedIndexInformer<KubeObject>;
  readonly toRequests: MapToRequests;
  readonly predicates: readonly Predicate[];
  /**
   * Re-deliver every cached object of the source once per period (the
   * informer's bucketed resync), past the predicates: the primary's resync
   * floor. 0 or absent: never.
   */
  readonly resyncPeriodMs?: number;
}

/** What a {@link Controller} is built from; the manager fills it from a controller's definition. */
export interface ControllerRunOptions<T extends KubeObject> extends Instrumentation {
  name: string;
  /** The primary kind's informer: `ctx.current()` reads it (unless `current` is given). */
  primary: SharedIndexInformer<T>;
  /** How `ctx.current()` finds the object of a key when the primary is cached by several informers (one per namespace). */
  current?: (key: string) => T | undefined;
  /** Every informer whose events enqueue requests, the primary's first. */
  sources: readonly ControllerSource[];
  /** Requests from outside the watched kinds (`triggers(source)`), read while the controller watches. */
  triggers?: readonly TriggerDeclaration[];
  /** The primary objects cached (what {@link Controller.reconcileAll} enqueues). Default: the primary informer's. */
  listPrimary?: () => readonly KubeObject[];
  /** What `ctx.owned` and `ctx.related` read. Absent: they read `reader` and know no owned kind. */
  related?: RelatedObjects;
  reconciler: Reconciler<T>;
  /**
   * What mapping functions read (their `context.client`): the manager's
   * cached client. Absent: a mapper's read rejects, naming this option.
   */
  reader?: Reader;
  /** Default 1. */
  concurrency?: number;
  /** 0 or absent: no limit. */
  reconcileTimeoutMs?: number;
  /** How long in-flight reconciles may run once work stops. Default 30000. */
  drainTimeoutMs?: number;
  rateLimiter?: RateLimiter<string>;
  /** Caps the default rate limiter's per-key backoff, in ms (not with `rateLimiter`). */
  maxBackoffMs?: number;
  /**
   * The finalizer managed for the reconciler's `cleanup` (which it must
   * have): added before a live object's reconcile, removed after its cleanup.
   */
  finalizer?: ManagedFinalizer<T>;
  /**
   * Whether this replica may work on a key now (a sharded controller's
   * dequeue guard); asked when an event would enqueue the key and again
   * when a worker takes it. Default: always.
   */
  admit?: (key: string) => boolean;
  /**
   * Called as a reconcile of `key` starts (after `admit` passed, in the same
   * synchronous step); the function it returns is called when it ends. A
   * sharded controller tracks in-flight reconciles by slot with it.
   */
  track?: (key: string) => () => void;
}

/**
 * One controller: the primary's and secondaries' informer events, filtered
 * by predicates and mapped to requests, go into a deduplicating, rate-limited
 * work queue (events of the initial list at low priority, so live events are
 * served first); a worker pool runs the reconciler over it. Watching and
 * working are separate so the manager can keep a standby's queue and caches
 * warm and start the workers once it leads.
 */
export class Controller<T extends KubeObject = KubeObject> {
  readonly name: string;
  readonly queue: WorkQueue<string>;
  private readonly options: ControllerRunOptions<T>;
  private readonly logger: Logger;
  private readonly tracer: Tracer;
  private readonly metrics: ControllerMetrics;
  private readonly instrumentation: Instrumentation;
  private registrations: HandlerRegistration[] = [];
  /** What `ctx.owned` and `ctx.related` read through. */
  private readonly related: RelatedObjects;
  private pool: WorkerPool<string> | undefined;
  /** Start times (clock ms) of the reconciles running now, by key. */
  private readonly started = new Map<string, number>();
  private readonly clock: Clock;
  /** Aborted when the controller stops watching: ends the reads of mappers in flight. */
  private readonly stopping = new AbortController();
  private readonly mapContext: MapContext;
  private readonly failures: FailureLog;

  constructor(options: ControllerRunOptions<T>) {
    if (options.finalizer && typeof options.reconciler.cleanup !== "function") {
      throw new TypeError(
        `controller ${options.name}: finalizer ${options.finalizer.name} needs the reconciler's cleanup(object, ctx) method`,
      );
    }
    this.options = options;
    this.name = options.name;
    const tools = resolveInstrumentation(options, "@tessera/runtime");
    this.instrumentation = {
      clock: tools.clock,
      random: tools.random,
      logger: tools.logger,
      meter: tools.meter,
      tracer: tools.tracer,
    };
    this.logger = withFields(tools.logger, { controller: options.name });
    this.tracer = tools.tracer;
    this.clock = tools.clock;
    this.metrics = new ControllerMetrics(tools.meter, options.name);
    this.failures = new FailureLog(this.logger);
    this.queue = new WorkQueue<string>({
      ...this.instrumentation,
      name: options.name,
      rateLimiter:
        options.rateLimiter ??
        defaultControllerRateLimiter<string>({
          clock: tools.clock,
          ...(options.maxBackoffMs ? { maxDelayMs: options.maxBackoffMs } : {}),
        }),
    });
    this.mapContext = Object.freeze({
      client: options.reader ?? unavailableReader(options.name),
      signal: this.stopping.signal,
      logger: this.logger,
    });
    this.related =
      options.related ??
      new RelatedObjects({
        controller: options.name,
        reader: this.mapContext.client,
        owned: [],
        declared: [],
      });
  }

  /**
   * Queues `request` as an event would, unless this replica may not work on
   * it (a sharded controller's key of a slot another replica holds: dropped
   * here, the replica holding it reconciles the object on its own events and
   * resyncs). Returns whether it was queued. Throws a TypeError for a value
   * that is no request.
   */
  enqueue(request: Request): boolean {
    const problem = requestProblem(request);
    if (problem) throw new TypeError(`controller ${this.name}: enqueue: ${problem}`);
    const key = requestKey({ namespace: request.namespace ?? "", name: request.name });
    if (this.options.admit && !this.options.admit(key)) return false;
    this.queue.add(key, { priority: NORMAL_PRIORITY });
    return true;
  }

  /**
   * Queues every cached object of the primary kind (kube-rs's
   * `reconcile_all_on`), at low priority so live events go first. In
   * `sharded` mode, the objects of this replica's slots. Returns how many
   * were queued.
   */
  reconcileAll(): number {
    const objects = this.options.listPrimary?.() ?? this.options.primary.lister.list();
    let queued = 0;
    for (const object of objects) {
      const meta = metadataOf(object);
      const key = requestKey({ namespace: meta.namespace ?? "", name: meta.name ?? "" });
      if (this.options.admit && !this.options.admit(key)) continue;
      this.queue.add(key, { priority: LOW_PRIORITY });
      queued++;
    }
    return queued;
  }

  /**
   * Registers the event handlers on every source. Call once, before or after
   * the informers run. When `signal` aborts (the manager stops), the reads
   * of mapping functions in flight are aborted.
   */
  watch(signal?: AbortSignal): void {
    if (this.registrations.length > 0) return;
    if (signal?.aborted) this.stopping.abort(signal.reason);
    else signal?.addEventListener("abort", () => this.stopping.abort(signal.reason), { once: true });
    this.registrations = this.options.sources.map((source, index) =>
      source.informer.addEventHandler(this.handlerFor(source), {
        name: `${this.name}-${index === 0 ? "for" : `watch-${index}`}`,
        ...(source.resyncPeriodMs ? { resyncPeriodMs: source.resyncPeriodMs } : {}),
      }),
    );
    for (const trigger of this.options.triggers ?? []) {
      void consumeTrigger(
        trigger,
        (request) => void this.enqueue(request),
        this.stopping.signal,
        withFields(this.logger, { source: "trigger" }),
      );
    }
  }

  /** True once every source informer synced and handed its initial list to this controller. */
  hasSynced(): boolean {
    return this.registrations.length > 0 && this.registrations.every((r) => r.hasSynced());
  }

  /** Resolves `true` once {@link Controller.hasSynced}; `false` if `signal` aborts first. */
  async waitForSync(signal?: AbortSignal): Promise<boolean> {
    const results = await Promise.all(this.registrations.map((r) => r.waitForSync(signal)));
    return results.length > 0 && results.every(Boolean);
  }

  /** Reconciles in flight now. */
  get inFlight(): number {
    return this.pool?.inFlight ?? 0;
  }

  /**
   * Informer events handed to this controller and not yet turned into
   * requests (waiting, or in a mapping function): with {@link Controller.inFlight}
   * and the queue's stats, what tells a test that the controller is idle.
   */
  get pendingEvents(): number {
    return this.registrations.reduce((sum, r) => sum + r.pending, 0);
  }

  /**
   * Runs the workers until `signal` aborts, then lets in-flight reconciles
   * finish within the drain timeout; when `options.abortInFlight` aborts
   * (leadership lost), the reconciles in flight are aborted at once. A
   * controller works once (its queue closes when the workers stop).
   */
  work(signal: AbortSignal, options: WorkerPoolRunOptions = {}): Promise<WorkerPoolOutcome<string>> {
    const o = this.options;
    this.pool = new WorkerPool<string>({
      ...this.instrumentation,
      queue: this.queue,
      concurrency: o.concurrency ?? 1,
      ...(o.reconcileTimeoutMs ? { timeoutMs: o.reconcileTimeoutMs } : {}),
      drainTimeoutMs: o.drainTimeoutMs ?? 30_000,
      handler: (key, ctx) => this.reconcileKey(key, ctx),
      // Logged here, in proportion (FailureLog), not once per failure by the pool.
      logFailures: false,
      onError: (error) => {
        this.failures.failed(error);
        // What the reconcile threw, also when onError chose its retry.
        const cause = error.cause instanceof RequeueAfterError ? error.cause.cause : error.cause;
        if (cause instanceof WorkItemTimeoutError) this.metrics.timeouts.add();
        else if (isPanic(cause)) this.metrics.panics.add();
      },
    });
    return this.pool.run(signal, options);
  }

  /**
   * Reconciles running longer than twice the reconcile timeout: their
   * handlers ignore the aborted signal (a worker stuck in user code). Empty
   * when the controller has no reconcile timeout.
   */
  stuckReconciles(): Array<{ key: string; runningMs: number }> {
    const timeoutMs = this.options.reconcileTimeoutMs;
    if (!timeoutMs) return [];
    const now = this.clock.now();
    const stuck: Array<{ key: string; runningMs: number }> = [];
    for (const [key, startedAt] of this.started) {
      if (now - startedAt > 2 * timeoutMs) stuck.push({ key, runningMs: now - startedAt });
    }
    return stuck;
  }

  /** Removes the event handlers, closes the queue and the metrics. */
  close(): void {
    this.stopping.abort(new Error(`controller ${this.name} closed`));
    for (const r of this.registrations) r.close();
    this.registrations = [];
    this.queue.close();
    this.metrics.close();
  }

  /**
   * The informer handler of `source`. A mapper that returns a promise is
   * awaited before the informer hands this handler its next event, so the
   * source's events are mapped in order, and an initial list counts as
   * delivered (for {@link Controller.hasSynced}) once its requests are queued.
   */
  private handlerFor(source: ControllerSource) {
    const enqueue = (requests: readonly Request[], initial: boolean): void => {
      for (const request of requests) {
        const key = requestKey(request);
        if (this.options.admit && !this.options.admit(key)) continue;
        this.queue.add(key, { priority: initial ? LOW_PRIORITY : NORMAL_PRIORITY });
      }
    };
    const map = (object: KubeObject, initial: boolean): void | Promise<void> => {
      let mapped: readonly Request[] | Promise<readonly Request[]>;
      try {
        mapped = source.toRequests(object, this.mapContext);
      } catch (error) {
        return this.mappingFailed(source, error);
      }
      if (Array.isArray(mapped)) return enqueue(mapped, initial);
      return Promise.resolve(mapped)
        .then((requests) => {
          if (!Array.isArray(requests)) throw notRequests(requests);
          enqueue(requests, initial);
        })
        .catch((error: unknown) => this.mappingFailed(source, error));
    };
    const pass = (event: Parameters<typeof admits>[1]): boolean =>
      source.predicates.every((p) => admits(p, event));
    return {
      onAdd: (object: KubeObject, initial: boolean) =>
        pass({ type: "create", object }) ? map(object, initial) : undefined,
      // A resync (the same object twice) is the resync floor: past the predicates, behind live events.
      onUpdate: (oldObject: KubeObject, newObject: KubeObject) => {
        const resync = Boolean(source.resyncPeriodMs) && oldObject === newObject;
        return resync || pass({ type: "update", oldObject, newObject }) ? map(newObject, resync) : undefined;
      },
      onDelete: (deleted: KubeObject | DeletedFinalStateUnknown<KubeObject>) => {
        const object = deleted instanceof DeletedFinalStateUnknown ? deleted.obj : deleted;
        return object && pass({ type: "delete", object }) ? map(object, false) : undefined;
      },
    };
  }

  /**
   * A mapper threw or rejected: the event is dropped. The error goes on to
   * the informer, which logs it with the object's key and the handler
   * (`<controller>-watch-<n>`) and counts it in
   * `tessera_informer_handler_errors_total`; it names the controller. Not
   * once the controller is stopping (its reads were aborted).
   */
  private mappingFailed(source: ControllerSource, error: unknown): void {
    if (this.stopping.signal.aborted) return;
    throw new Error(
      `controller ${this.name}: the mapping function of ${source.informer.resource} failed, the event is dropped: ${toError(error).message}`,
      { cause: error },
    );
  }

  private async reconcileKey(key: string, work: WorkContext): Promise<WorkResult | void> {
    if (this.options.admit && !this.options.admit(key)) return;
    const finished = this.options.track?.(key);
    this.started.set(key, this.clock.now());
    const request = requestFromKey(key);
    const attempt = work.attempt + 1;
    const logger = withFields(this.logger, { namespace: request.namespace, name: request.name, attempt });
    const primary = this.options.primary;
    const lookup = this.options.current;
    const ctx: ReconcileContext<T> = {
      signal: work.signal,
      logger,
      attempt,
      current: () => (lookup ? lookup(key) : primary.lister.getByKey(key)),
      owned: (kind) => this.related.owned(kind, ctx.current(), work.signal),
      related: (kind, index, value) => this.related.related(kind, index, value, work.signal),
    };
    try {
      return await this.tracer.startActiveSpan(
        "reconcile",
        { attributes: { controller: this.name, namespace: request.namespace, name: request.name, attempt } },
        async (span) => {
          try {
            const result = await this.reconcileOrCleanUp(request, ctx);
            this.failures.succeeded(key);
            const requeueAfterMs = result?.requeueAfterMs;
            span.setAttribute("result", requeueAfterMs ? "requeue_after" : "success");
            if (requeueAfterMs) span.setAttribute("requeueAfterMs", requeueAfterMs);
            return requeueAfterMs ? { requeueAfterMs } : undefined;
          } catch (thrown) {
            span.setAttribute("result", "error");
            span.recordException(toError(thrown));
            span.setStatus({ code: SpanStatusCode.ERROR, message: toError(thrown).message });
            throw await this.retryOf(thrown, ctx);
          } finally {
            span.end();
          }
        },
      );
    } finally {
      this.started.delete(key);
      finished?.();
    }
  }

  /** The reconcile, or with a managed finalizer its add, the cleanup and its removal. */
  private reconcileOrCleanUp(request: Request, ctx: ReconcileContext<T>): Promise<Result> | Result {
    const { reconciler, finalizer } = this.options;
    if (!finalizer) return reconciler.reconcile(request, ctx);
    return finalizer.run(
      ctx.current(),
      ctx,
      (object, c) => reconciler.cleanup!(object, c),
      () => reconciler.reconcile(request, ctx),
    );
  }

  /**
   * What the pool is handed for `thrown`: as thrown, unless the
   * reconciler's `onError` recognises it (a `RequeueAfterError` for its
   * delay, a `TerminalError` for giving up). A `TerminalError` thrown by
   * the reconcile is not asked about.
   */
  private async retryOf(thrown: unknown, ctx: ReconcileContext<T>): Promise<unknown> {
    const reconciler = this.options.reconciler;
    if (typeof reconciler.onError !== "function" || isTerminalError(thrown)) return thrown;
    let decision: ErrorResult;
    try {
      decision = await reconciler.onError(thrown, ctx.current(), ctx);
    } catch (policyError) {
      ctx.logger.error("onError threw; the rate limiter retries the reconcile", {
        error: toError(policyError).message,
      });
      return thrown;
    }
    if (decision?.type === "terminal") {
      return new TerminalError(`${toError(thrown).message} (onError gave up)`, { cause: thrown });
    }
    if (decision?.type === "requeue")
      return new RequeueAfterError(decision.requeueAfterMs, { cause: thrown });
    return thrown;
  }
}

/** The reader of a controller built without one: every read says what to pass. */
function unavailableReader(controller: string): Reader {
  const fail = (): Promise<never> =>
    Promise.reject(
      new Error(
        `controller ${controller} has no reader for its mapping functions: pass ControllerRunOptions.reader (the manager passes its cached client)`,
      ),
    );
  return { get: fail, list: fail };
}

function notRequests(value: unknown): TypeError {
  return new TypeError(
    `a mapping function must return an array of requests ({ namespace, name }) or a promise of one, not ${value === null ? "null" : typeof value}`,
  );
}
