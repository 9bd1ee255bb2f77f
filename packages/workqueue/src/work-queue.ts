import type { Meter } from "@opentelemetry/api";
import { SystemClock, type Clock } from "./clock.js";
import { defaultControllerRateLimiter } from "./default-rate-limiter.js";
import { DelayBuckets } from "./delay-buckets.js";
import { describeItem } from "./describe-item.js";
import { silentLogger, type Logger } from "./logger.js";
import { NORMAL_PRIORITY, type AddOptions } from "./priority.js";
import { PriorityFifo, type PendingEntry } from "./priority-fifo.js";
import { QueueMetrics } from "./queue-metrics.js";
import type { RateLimiter } from "./rate-limiter.js";
import { RingBuffer } from "./ring-buffer.js";

/** Options for a {@link WorkQueue}. */
export interface WorkQueueOptions<T> {
  /** Labels the metrics (`name=<name>`) and the log lines; default `"workqueue"`. */
  name?: string;
  /** Default: the system clock. The default rate limiter uses this clock too. */
  clock?: Clock;
  /** Used by {@link WorkQueue.addRateLimited}; default {@link defaultControllerRateLimiter}. */
  rateLimiter?: RateLimiter<T>;
  /** Where to create the `workqueue_*` instruments; without one the queue records no metrics. */
  meter?: Meter;
  /** Default: silent. */
  logger?: Logger;
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
  /** Adds refused because the queue was shutting down. */
  droppedAfterShutdown: number;
  /** Calls of `done` for an item that was not being processed. */
  ignoredDone: number;
  /** How many times the delay timer has fired. */
  delayTicks: number;
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
 * WorkQueue.get} answers `undefined` once the queue is shut down and empty.
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
  private readonly metrics: QueueMetrics | undefined;
  private readonly ready = new PriorityFifo<T>();
  /** Items that must be handed out (again): the ready ones and those re-added while processing. */
  private readonly dirty = new Map<T, PendingEntry<T>>();
  /** Items handed out and not yet done, with the clock reading of the hand-out (0 without metrics). */
  private readonly processing = new Map<T, number>();
  private readonly waiters = new RingBuffer<(item: T | undefined) => void>();
  private readonly delayed: DelayBuckets<T>;
  private drainWaiters: (() => void)[] = [];
  private closed = false;
  private dropped = 0;
  private ignoredDones = 0;

  constructor(options: WorkQueueOptions<T> = {}) {
    this.name = options.name ?? "workqueue";
    this.clock = options.clock ?? new SystemClock();
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter<T>({ clock: this.clock });
    this.logger = options.logger ?? silentLogger;
    this.delayed = new DelayBuckets<T>(this.clock, (item, priority) => this.enqueue(item, priority));
    this.metrics =
      options.meter === undefined
        ? undefined
        : new QueueMetrics(options.meter, this.name, {
            depth: () => this.dirty.size,
            processingSince: () => this.processing.values(),
            now: () => this.clock.now(),
          });
  }

  /**
   * Queues `item` unless it is already queued (then only its priority may
   * rise). If the item is being processed it is handed out again after its
   * `done`. A delayed add of the item waiting is superseded. Dropped, and
   * counted, once the queue is shutting down.
   */
  add(item: T, options?: AddOptions): void {
    if (this.closed) return this.drop("add", item);
    const priority = this.priorityOf("add", item, options);
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
    if (this.closed) return this.drop("addAfter", item);
    const priority = this.priorityOf("addAfter", item, options);
    this.metrics?.retried();
    if (!(delayMs > 0)) {
      if (this.delayed.size !== 0) this.delayed.cancel(item);
      this.enqueue(item, priority);
      return;
    }
    // Already queued (or re-queued for after its processing): that is sooner than any delay.
    if (this.dirty.has(item)) return;
    this.delayed.schedule(item, delayMs, priority);
  }

  /** Adds `item` after the delay its rate limiter gives (which also counts a requeue of it). */
  addRateLimited(item: T, options?: AddOptions): void {
    if (this.closed) return this.drop("addRateLimited", item);
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
   * is then being processed until {@link WorkQueue.done}. After a shutdown the
   * items still ready are handed out, then every call answers `undefined`.
   * Waiting callers are served in call order.
   */
  get(): Promise<T | undefined> {
    const entry = this.ready.shift();
    if (entry !== undefined) return Promise.resolve(this.handOut(entry));
    if (this.closed) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Like {@link WorkQueue.get} without waiting: the next ready item, or `undefined` if none is ready. */
  tryGet(): T | undefined {
    const entry = this.ready.shift();
    return entry === undefined ? undefined : this.handOut(entry);
  }

  /**
   * Marks `item` as processed. If it was added meanwhile, it is queued again.
   * A `done` for an item that is not being processed is ignored (and counted).
   */
  done(item: T): void {
    const since = this.processing.get(item);
    if (since === undefined) {
      this.ignoredDones++;
      this.logger.debug("workqueue: done for an item that is not being processed; ignored", {
        queue: this.name,
        item: describeItem(item),
      });
      return;
    }
    this.processing.delete(item);
    if (this.metrics !== undefined) this.metrics.finished(this.clock.now() - since);
    const entry = this.dirty.get(item);
    if (entry !== undefined) this.makeReady(entry);
    if (this.closed) this.settleDrain();
  }

  /** How many items are ready to be handed out. */
  len(): number {
    return this.ready.length;
  }

  /** Whether {@link WorkQueue.shutDown} or {@link WorkQueue.shutDownWithDrain} was called. */
  shuttingDown(): boolean {
    return this.closed;
  }

  /** Sizes and counters, for tests and diagnostics. */
  stats(): WorkQueueStats {
    return {
      ready: this.ready.length,
      processing: this.processing.size,
      depth: this.dirty.size,
      delayed: this.delayed.size,
      droppedAfterShutdown: this.dropped,
      ignoredDone: this.ignoredDones,
      delayTicks: this.delayed.ticks,
    };
  }

  /**
   * Stops accepting adds and drops the delayed ones. Callers waiting in
   * {@link WorkQueue.get} get `undefined`; items already ready are still handed
   * out. Ends the wait of a pending {@link WorkQueue.shutDownWithDrain}.
   * Idempotent.
   */
  shutDown(): void {
    this.close();
    const waiting = this.drainWaiters;
    this.drainWaiters = [];
    for (const resolve of waiting) resolve();
  }

  /**
   * Shuts down like {@link WorkQueue.shutDown}, then resolves once every item
   * has been handed out and marked done: nothing is ready or processing. The
   * workers must keep calling `get` and `done` for this to happen.
   */
  shutDownWithDrain(): Promise<void> {
    this.close();
    if (this.isDrained()) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    const delayed = this.delayed.size;
    this.delayed.clear();
    this.logger.info("workqueue: shutting down", {
      queue: this.name,
      ready: this.ready.length,
      processing: this.processing.size,
      droppedDelayed: delayed,
    });
    for (let waiter = this.waiters.shift(); waiter; waiter = this.waiters.shift()) waiter(undefined);
    this.settleDrain();
  }

  private enqueue(item: T, priority: number): void {
    const existing = this.dirty.get(item);
    if (existing !== undefined) {
      if (priority > existing.priority) {
        if (this.processing.has(item)) existing.priority = priority;
        else this.dirty.set(item, this.ready.raise(existing, priority));
      }
      return;
    }
    const entry: PendingEntry<T> = {
      item,
      priority,
      addedAt: this.metrics === undefined ? 0 : this.clock.now(),
      live: true,
    };
    this.dirty.set(item, entry);
    this.metrics?.added();
    if (!this.processing.has(item)) this.makeReady(entry);
  }

  private makeReady(entry: PendingEntry<T>): void {
    const waiter = this.waiters.shift();
    if (waiter === undefined) this.ready.push(entry);
    else waiter(this.handOut(entry));
  }

  private handOut(entry: PendingEntry<T>): T {
    const item = entry.item;
    this.dirty.delete(item);
    if (this.metrics === undefined) {
      this.processing.set(item, 0);
    } else {
      const now = this.clock.now();
      this.processing.set(item, now);
      this.metrics.handedOut(now - entry.addedAt);
    }
    return item;
  }

  private isDrained(): boolean {
    return this.processing.size === 0 && this.ready.length === 0;
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
    this.logger.debug("workqueue: shutting down; add dropped", {
      queue: this.name,
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
