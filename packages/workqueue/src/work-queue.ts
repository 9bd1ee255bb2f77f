import {
  isNoopMeter,
  resolveInstrumentation,
  withFields,
  type Clock,
  type Instrumentation,
  type Logger,
} from "@tessera/core";
import { defaultControllerRateLimiter } from "./default-rate-limiter.js";
import { DelayBuckets } from "./delay-buckets.js";
import { describeItem } from "./describe-item.js";
import { NORMAL_PRIORITY, type AddOptions } from "./priority.js";
import type { ItemState } from "./item-state.js";
import { PriorityFifo } from "./priority-fifo.js";
import { QueueMetrics } from "./queue-metrics.js";
import type { RateLimiter } from "./rate-limiter.js";
import { RingBuffer } from "./ring-buffer.js";

/** Idle item states are swept after at least this many items became idle (or twice the number tracked, if more). */
const MIN_SWEEP_INTERVAL = 4_096;

/**
 * Options for a {@link WorkQueue}. Of the instrumentation it uses the `clock`
 * (delays, durations; the default rate limiter's too), the `logger` (every
 * line carries `queue=<name>`) and the `meter` (the `workqueue_*` metrics;
 * none are recorded while it is OpenTelemetry's no-op meter, which the global
 * meter is until an SDK is registered).
 */
export interface WorkQueueOptions<T> extends Instrumentation {
  /** Labels the metrics (`name=<name>`) and the log lines; default `"workqueue"`. */
  name?: string;
  /** Used by {@link WorkQueue.addRateLimited}; default {@link defaultControllerRateLimiter}. */
  rateLimiter?: RateLimiter<T>;
}

/** Counters and sizes of a {@link WorkQueue}, for tests and diagnostics. */
export interface WorkQueueStats {
  /** Items ready to be handed out ({@link WorkQueue.len}). */
  ready: number;
  /** Items handed out and not yet done. */
  processing: number;
  /** Items waiting to be processed: ready ones plus those re-added while processing (`workqueue_depth`). */
  depth: number;
  /** Items waiting for a delayed or rate-limited add to fire. */
  delayed: number;
  /** Adds refused because the queue was closed. */
  droppedAfterClose: number;
  /** Calls of `done` for an item that was not being processed. */
  ignoredDone: number;
  /** How many times the delay timer has fired. */
  delayTicks: number;
  /** Item records held: queued, processing, or recently done (kept for reuse, swept in batches). */
  tracked: number;
}

/**
 * The deduplicating, rate-limited work queue between informers and
 * reconcilers, with client-go's guarantees:
 *
 * - an item is queued at most once, however often it is added before it is
 *   handed out;
 * - an item is never handed out again while it is being processed (between
 *   {@link WorkQueue.get} and {@link WorkQueue.done});
 * - an item added while it is being processed is handed out again after its
 *   `done`.
 *
 * Among ready items a higher priority comes first, otherwise first in, first
 * out. Delayed adds ({@link WorkQueue.addAfter}) fire from one timer over
 * buckets; an item waits for at most one fire time, the earliest asked for,
 * and an immediate add of a waiting item supersedes its delayed add.
 *
 * Items are compared like `Map` keys: use strings such as `namespace/name`
 * (or other primitives). `undefined` and `null` are not items; {@link
 * WorkQueue.get} answers `undefined` once the queue is closed and empty.
 *
 * A queue is a data structure, not a `Runnable`: it ends with
 * {@link WorkQueue.close} (adds stop, workers take what is left) or
 * {@link WorkQueue.drain} (the same, and wait until everything handed out is
 * done). A `WorkerPool` closes its queue when its run stops.
 *
 * ```ts
 * const queue = new WorkQueue<string>({ name: "configmaps" });
 * queue.add("default/settings");
 * for (let key = await queue.get(); key !== undefined; key = await queue.get()) {
 *   try {
 *     await reconcile(key);
 *     queue.forget(key);
 *   } catch {
 *     queue.addRateLimited(key);
 *   } finally {
 *     queue.done(key);
 *   }
 * }
 * ```
 */
export class WorkQueue<T extends NonNullable<unknown>> {
  /** The queue's name, as in its metrics and logs. */
  readonly name: string;
  private readonly clock: Clock;
  private readonly rateLimiter: RateLimiter<T>;
  private readonly logger: Logger;
  /** Absent when the meter is OpenTelemetry's no-op one: then the hot path reads no clock for metrics. */
  private readonly metrics: QueueMetrics | undefined;
  private readonly ready = new PriorityFifo<T>();
  /** Every item queued, being processed, or both, and recently idle ones; one lookup per operation. */
  private readonly states = new Map<T, ItemState<T>>();
  private dirtyCount = 0;
  private processingCount = 0;
  /** Items that became idle since the last sweep of idle states, and when the next sweep is due. */
  private idledSinceSweep = 0;
  private sweepEvery = MIN_SWEEP_INTERVAL;
  private readonly waiters = new RingBuffer<(item: T | undefined) => void>();
  private readonly delayed: DelayBuckets<T>;
  private drainWaiters: (() => void)[] = [];
  private isClosed = false;
  private dropped = 0;
  private ignoredDones = 0;

  constructor(options: WorkQueueOptions<T> = {}) {
    this.name = options.name ?? "workqueue";
    const tools = resolveInstrumentation(options, "@tessera/workqueue");
    this.clock = tools.clock;
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter<T>({ clock: this.clock });
    this.logger = withFields(tools.logger, { queue: this.name });
    this.delayed = new DelayBuckets<T>(this.clock, (item, priority) => this.enqueue(item, priority));
    // The global meter is the no-op one until an SDK is registered. Timing every
    // add, hand-out and done for it would cost more than the queue itself
    // (three clock readings per item), so such a queue keeps no metrics.
    this.metrics = isNoopMeter(tools.meter)
      ? undefined
      : new QueueMetrics(tools.meter, this.name, {
          depth: () => this.dirtyCount,
          processingSince: () => this.processingSince(),
          now: () => this.clock.now(),
        });
  }

  /**
   * Queues `item` unless it is already queued (then only its priority may
   * rise). If the item is being processed it is handed out again after its
   * `done`. A delayed add of the item waiting is superseded. Dropped, and
   * counted, once the queue is closed.
   */
  add(item: T, options?: AddOptions): void {
    if (this.isClosed) return this.drop("add", item);
    const priority = options === undefined ? NORMAL_PRIORITY : this.priorityOf("add", item, options);
    if (this.delayed.size !== 0) this.delayed.cancel(item);
    this.enqueue(item, priority);
  }

  /**
   * Adds `item` once `delayMs` milliseconds have passed. A zero, negative or
   * `NaN` delay means now. If the item already waits, the earlier fire time
   * wins; if it is already queued, this does nothing. Items fire in buckets
   * ({@link delayGranularityMs}): never early, and late by less than one
   * bucket width. Counted in `workqueue_retries_total`, as in client-go.
   */
  addAfter(item: T, delayMs: number, options?: AddOptions): void {
    if (this.isClosed) return this.drop("addAfter", item);
    const priority = this.priorityOf("addAfter", item, options);
    this.metrics?.retried();
    if (!(delayMs > 0)) {
      if (this.delayed.size !== 0) this.delayed.cancel(item);
      this.enqueue(item, priority);
      return;
    }
    // Already queued (or re-queued for after its processing): that is sooner than any delay.
    if (this.states.get(item)?.dirty === true) return;
    this.delayed.schedule(item, delayMs, priority);
  }

  /** Adds `item` after the delay its rate limiter gives (which also counts a requeue of it). */
  addRateLimited(item: T, options?: AddOptions): void {
    if (this.isClosed) return this.drop("addRateLimited", item);
    this.addAfter(item, this.rateLimiter.when(item), options);
  }

  /** Clears the rate limiter's failure history of `item`; call it once `item` was processed successfully. */
  forget(item: T): void {
    this.rateLimiter.forget(item);
  }

  /** How many times `item` has been rate-limited since it was last forgotten. */
  numRequeues(item: T): number {
    return this.rateLimiter.numRequeues(item);
  }

  /**
   * Hands out the next ready item, waiting for one if none is ready; the item
   * is then being processed until {@link WorkQueue.done}. After
   * {@link WorkQueue.close} the items still ready are handed out, then every
   * call answers `undefined`.
   * Waiting callers are served in call order.
   */
  get(): Promise<T | undefined> {
    const state = this.ready.shift();
    if (state !== undefined) return Promise.resolve(this.handOut(state));
    if (this.isClosed) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Like {@link WorkQueue.get} without waiting: the next ready item, or `undefined` if none is ready. */
  tryGet(): T | undefined {
    const state = this.ready.shift();
    return state === undefined ? undefined : this.handOut(state);
  }

  /**
   * Marks `item` as processed. If it was added meanwhile, it is queued again.
   * A `done` for an item that is not being processed is ignored (and counted).
   */
  done(item: T): void {
    const state = this.states.get(item);
    if (state === undefined || !state.processing) {
      this.ignoredDones++;
      this.logger.debug("workqueue: done for an item that is not being processed; ignored", {
        item: describeItem(item),
      });
      return;
    }
    state.processing = false;
    this.processingCount--;
    if (this.metrics !== undefined) this.metrics.finished(this.clock.now() - state.since);
    if (state.dirty) this.makeReady(state);
    else this.becameIdle(state);
    if (this.isClosed) this.settleDrain();
  }

  /**
   * How long the item waiting longest (queued and not yet handed out) has
   * waited, in ms; 0 when none waits. For a backlog gauge an autoscaler reads.
   * O(items held): meant for metric collection, not for a hot path. Only
   * tracked when the queue has a meter (else 0).
   */
  oldestWaitingMs(): number {
    if (this.metrics === undefined) return 0;
    let oldest = Infinity;
    for (const state of this.states.values()) {
      if (state.dirty && !state.processing && state.addedAt < oldest) oldest = state.addedAt;
    }
    return oldest === Infinity ? 0 : Math.max(0, this.clock.now() - oldest);
  }

  /** How many items are ready to be handed out. */
  len(): number {
    return this.ready.length;
  }

  /** Whether {@link WorkQueue.close} or {@link WorkQueue.drain} was called. */
  get closed(): boolean {
    return this.isClosed;
  }

  /** Sizes and counters, for tests and diagnostics. */
  stats(): WorkQueueStats {
    return {
      ready: this.ready.length,
      processing: this.processingCount,
      depth: this.dirtyCount,
      delayed: this.delayed.size,
      droppedAfterClose: this.dropped,
      ignoredDone: this.ignoredDones,
      delayTicks: this.delayed.ticks,
      tracked: this.states.size,
    };
  }

  /**
   * Stops accepting adds (later adds are dropped and counted) and drops the
   * delayed ones. Callers waiting in {@link WorkQueue.get} get `undefined`;
   * items already ready are still handed out, and `done` keeps working.
   * Ends the wait of a pending {@link WorkQueue.drain} at once. Idempotent.
   */
  close(): void {
    this.stopAccepting();
    const waiting = this.drainWaiters;
    this.drainWaiters = [];
    for (const resolve of waiting) resolve();
  }

  /**
   * Closes the queue to adds like {@link WorkQueue.close}, then resolves once
   * every item has been handed out and marked done: nothing is ready or
   * processing. The workers must keep calling `get` and `done` for this to
   * happen; a {@link WorkQueue.close} meanwhile ends the wait. Never rejects.
   */
  drain(): Promise<void> {
    this.stopAccepting();
    if (this.isDrained()) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private stopAccepting(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    const delayed = this.delayed.size;
    this.delayed.clear();
    this.logger.info("workqueue: closed; shutting down", {
      ready: this.ready.length,
      processing: this.processingCount,
      droppedDelayed: delayed,
    });
    for (let waiter = this.waiters.shift(); waiter; waiter = this.waiters.shift()) waiter(undefined);
    this.settleDrain();
  }

  private enqueue(item: T, priority: number): void {
    let state = this.states.get(item);
    if (state === undefined) {
      state = {
        item,
        dirty: true,
        processing: false,
        priority,
        addedAt: this.metrics === undefined ? 0 : this.clock.now(),
        since: 0,
        recent: false,
        stale: undefined,
      };
      this.states.set(item, state);
    } else if (state.dirty) {
      if (priority > state.priority) {
        if (state.processing) state.priority = priority;
        else this.ready.raise(state, priority);
      }
      return;
    } else {
      state.dirty = true;
      state.priority = priority;
      if (this.metrics !== undefined) state.addedAt = this.clock.now();
    }
    this.dirtyCount++;
    this.metrics?.added();
    if (!state.processing) this.makeReady(state);
  }

  private makeReady(state: ItemState<T>): void {
    if (this.waiters.length === 0) this.ready.push(state);
    else (this.waiters.shift() as (item: T | undefined) => void)(this.handOut(state));
  }

  private handOut(state: ItemState<T>): T {
    state.dirty = false;
    state.processing = true;
    this.dirtyCount--;
    this.processingCount++;
    if (this.metrics !== undefined) {
      const now = this.clock.now();
      state.since = now;
      this.metrics.handedOut(now - state.addedAt);
    }
    return state.item;
  }

  /**
   * Keeps the state of an item that was just done for reuse. Every
   * `sweepEvery` idlings, states idle since before the previous sweep are
   * dropped: amortised O(1), and only recently used items are remembered.
   */
  private becameIdle(state: ItemState<T>): void {
    state.recent = true;
    if (++this.idledSinceSweep < this.sweepEvery) return;
    this.states.forEach((s, item, states) => {
      if (s.dirty || s.processing) return;
      if (s.recent) s.recent = false;
      else states.delete(item);
    });
    this.idledSinceSweep = 0;
    // Twice the number tracked: an item that keeps coming back at any pace the
    // queue can see twice between sweeps is never dropped and re-created.
    this.sweepEvery = Math.max(MIN_SWEEP_INTERVAL, 2 * this.states.size);
  }

  private *processingSince(): Iterable<number> {
    for (const state of this.states.values()) if (state.processing) yield state.since;
  }

  private isDrained(): boolean {
    return this.processingCount === 0 && this.ready.length === 0;
  }

  private settleDrain(): void {
    if (!this.isDrained()) return;
    this.metrics?.close();
    const waiting = this.drainWaiters;
    this.drainWaiters = [];
    for (const resolve of waiting) resolve();
  }

  private drop(verb: string, item: T): void {
    this.dropped++;
    this.logger.debug("workqueue: closed; add dropped", {
      verb,
      item: describeItem(item),
    });
  }

  private priorityOf(verb: string, item: T, options: AddOptions | undefined): number {
    const priority = options?.priority;
    if (priority === undefined) return NORMAL_PRIORITY;
    if (!Number.isFinite(priority)) {
      throw new TypeError(
        `workqueue "${this.name}": ${verb} of ${describeItem(item)}: priority must be a finite number, got ${String(priority)}`,
      );
    }
    return priority;
  }
}
