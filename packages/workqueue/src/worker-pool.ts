import {
  resolveInstrumentation,
  withFields,
  type Clock,
  type Instrumentation,
  type Logger,
} from "@tessera/core";
import PQueue from "p-queue";
import { describeItem } from "./describe-item.js";
import { InFlightWork, type WorkContext } from "./in-flight-work.js";
import { WorkItemError, WorkItemTimeoutError, WorkerPoolStoppedError } from "./work-item-error.js";
import type { WorkQueue } from "./work-queue.js";

/** What a handler may return to ask for the item to come back. */
export interface WorkResult {
  /** Process the item again after this many milliseconds (its failure history is forgotten). */
  requeueAfterMs?: number;
  /** Process the item again after its rate-limited delay. */
  requeue?: boolean;
}

/** Processes one item. Throwing or rejecting requeues the item with rate limiting. */
export type WorkHandler<T> = (
  item: T,
  context: WorkContext,
) => Promise<WorkResult | void> | WorkResult | void;

/**
 * Options for a {@link WorkerPool}. Of the instrumentation it uses the
 * `clock` (timeouts; pass the queue's) and the `logger` (every line carries
 * `queue=<name>`).
 */
export interface WorkerPoolOptions<T extends NonNullable<unknown>> extends Instrumentation {
  /** The queue the pool takes items from. */
  queue: WorkQueue<T>;
  handler: WorkHandler<T>;
  /** How many items are processed at once; default 1. */
  concurrency?: number;
  /**
   * How long one item may run, in ms; default no limit. When it passes, the
   * handler's signal aborts, the item counts as failed (it is requeued with
   * rate limiting once the handler returns) and its slot goes to the next item.
   */
  timeoutMs?: number;
  /** Called with every failure, after it was logged; must not throw. */
  onError?: (error: WorkItemError<T>) => void;
}

/** Options for {@link WorkerPool.stop}. */
export interface WorkerPoolStopOptions {
  /** How long to wait for items in flight, in ms; default 30,000. */
  deadlineMs?: number;
}

/** The outcome of {@link WorkerPool.stop}. */
export interface WorkerPoolStopResult<T> {
  /** Every item in flight finished before the deadline. */
  drained: boolean;
  /** Items whose handlers were still running at the deadline (their signals were aborted). */
  abandoned: T[];
}

type Outcome = { ok: true; result: WorkResult | void } | { ok: false; error: unknown };

/**
 * Runs a handler over the items of a {@link WorkQueue}, `concurrency` at a
 * time, on a p-queue. It takes an item from the queue only when a slot is
 * free, so items it has not started stay in the queue (deduplicated, and
 * visible in its depth). For each item:
 *
 * - success: the rate limiter forgets the item, or it comes back after
 *   `requeueAfterMs`, or with rate limiting if the handler asked to `requeue`;
 * - a throw, a rejection or a timeout: logged, reported to `onError` and
 *   requeued with rate limiting; the pool keeps going;
 * - then `done`, only once the handler has actually returned, so an item is
 *   never processed twice at once even when a handler overruns its timeout.
 *
 * ```ts
 * const pool = new WorkerPool({ queue, concurrency: 4, timeoutMs: 60_000, handler: reconcile });
 * pool.start();
 * // ...
 * await pool.stop({ deadlineMs: 10_000 });
 * ```
 */
export class WorkerPool<T extends NonNullable<unknown>> {
  private readonly queue: WorkQueue<T>;
  private readonly handler: WorkHandler<T>;
  private readonly concurrency: number;
  private readonly timeoutMs: number | undefined;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly onError: ((error: WorkItemError<T>) => void) | undefined;
  private readonly slots: PQueue;
  private readonly inFlightItems = new Map<T, InFlightWork>();
  private state: "new" | "running" | "stopping" | "stopped" = "new";
  private pumping: Promise<void> = Promise.resolve();
  private wakePump: (() => void) | undefined;
  private stopping: Promise<WorkerPoolStopResult<T>> | undefined;

  constructor(options: WorkerPoolOptions<T>) {
    const concurrency = options.concurrency ?? 1;
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new RangeError(
        `worker pool for "${options.queue.name}": concurrency must be a positive integer, got ${concurrency}`,
      );
    }
    if (options.timeoutMs !== undefined && !(options.timeoutMs > 0)) {
      throw new RangeError(
        `worker pool for "${options.queue.name}": timeoutMs must be positive, got ${options.timeoutMs}`,
      );
    }
    this.queue = options.queue;
    this.handler = options.handler;
    this.concurrency = concurrency;
    this.timeoutMs = options.timeoutMs;
    const tools = resolveInstrumentation(options, "@tessera/workqueue");
    this.clock = tools.clock;
    this.logger = withFields(tools.logger, { queue: options.queue.name });
    this.onError = options.onError;
    this.slots = new PQueue({ concurrency });
    // One listener for the pool's life: a slot was freed (a task finished or timed out).
    this.slots.addEventListener("next", () => this.wakePump?.());
  }

  /** How many items are being processed now (those past their timeout included). */
  get inFlight(): number {
    return this.inFlightItems.size;
  }

  /** Starts taking items from the queue. Starting a running pool does nothing; a stopped one cannot restart. */
  start(): void {
    if (this.state === "running") return;
    if (this.state !== "new") throw new Error(`worker pool for "${this.queue.name}": start after stop`);
    this.state = "running";
    this.logger.info("workqueue: worker pool starting", {
      concurrency: this.concurrency,
    });
    this.pumping = this.pump();
  }

  /**
   * Stops taking items and shuts the queue down (items not yet taken stay
   * unprocessed), then waits for the items in flight, at most `deadlineMs`.
   * At the deadline the handlers still running get their signals aborted and
   * are reported as abandoned; their items are marked done whenever they
   * return. Calling it again returns the same outcome.
   */
  stop(options: WorkerPoolStopOptions = {}): Promise<WorkerPoolStopResult<T>> {
    if (this.stopping !== undefined) return this.stopping;
    const deadlineMs = options.deadlineMs ?? 30_000;
    this.state = "stopping";
    this.queue.shutDown();
    this.wakePump?.();
    this.stopping = this.finishStop(deadlineMs);
    return this.stopping;
  }

  private async finishStop(deadlineMs: number): Promise<WorkerPoolStopResult<T>> {
    await this.pumping;
    let result: WorkerPoolStopResult<T> = { drained: true, abandoned: [] };
    if (this.inFlightItems.size > 0) {
      const all = Promise.all([...this.inFlightItems.values()].map((f) => f.settled)).then(() => true);
      let timer: { cancel(): void } | undefined;
      const expired = new Promise<false>((resolve) => {
        timer = this.clock.setTimer(deadlineMs, () => resolve(false));
      });
      const drained = await Promise.race([all, expired]);
      timer?.cancel();
      if (!drained) {
        const abandoned = [...this.inFlightItems.keys()];
        for (const [item, work] of this.inFlightItems) {
          work.abort(new WorkerPoolStoppedError(this.queue.name, item, deadlineMs));
        }
        this.logger.warn("workqueue: worker pool stop deadline passed; abandoning items in flight", {
          deadlineMs,
          items: abandoned.map(describeItem),
        });
        result = { drained: false, abandoned };
      }
    }
    this.state = "stopped";
    this.logger.info("workqueue: worker pool stopped", { drained: result.drained });
    return result;
  }

  private async pump(): Promise<void> {
    while (this.state === "running") {
      if (this.slots.pending >= this.concurrency) {
        await this.slotFreed();
        continue;
      }
      // Take a ready item at once; wait only when none is ready.
      const item = this.queue.tryGet() ?? (await this.queue.get());
      if (item === undefined) break;
      // Taken from the queue, so it is processed even if a stop began meanwhile.
      this.dispatch(item);
    }
    this.wakePump = undefined;
  }

  private slotFreed(): Promise<void> {
    return new Promise((resolve) => {
      this.wakePump = () => {
        this.wakePump = undefined;
        resolve();
      };
    });
  }

  private dispatch(item: T): void {
    const work = new InFlightWork(this.queue.numRequeues(item));
    let timeout: WorkItemTimeoutError<T> | undefined;
    const timer =
      this.timeoutMs === undefined
        ? undefined
        : this.clock.setTimer(this.timeoutMs, () => {
            timeout = new WorkItemTimeoutError(this.queue.name, item, this.timeoutMs ?? 0);
            this.logger.warn("workqueue: item timed out; aborting its handler", {
              item: describeItem(item),
              timeoutMs: this.timeoutMs,
            });
            work.abort(timeout);
          });
    this.inFlightItems.set(item, work);
    let started = false;
    const startedAt = this.clock.now();

    const finish = (outcome: Outcome): void => {
      timer?.cancel();
      try {
        this.conclude(
          item,
          work.attempt,
          timeout === undefined ? outcome : { ok: false, error: timeout },
          startedAt,
        );
      } finally {
        this.inFlightItems.delete(item);
        this.queue.done(item);
        work.settle();
      }
    };

    const run = async (): Promise<void> => {
      started = true;
      let outcome: Outcome;
      try {
        outcome = { ok: true, result: await this.handler(item, work) };
      } catch (error) {
        outcome = { ok: false, error };
      }
      finish(outcome);
    };

    // With a timeout, the signal frees the p-queue slot when it passes; `run`
    // itself carries on until the handler returns.
    const task = this.slots.add(run, timer === undefined ? undefined : { signal: work.signal });
    task.catch((error: unknown) => {
      if (!started) finish({ ok: false, error });
    });
  }

  private conclude(item: T, attempt: number, outcome: Outcome, startedAt: number): void {
    if (!outcome.ok) {
      const error = new WorkItemError(this.queue.name, item, attempt, outcome.error);
      this.logger.error("workqueue: processing failed; requeueing with rate limit", {
        item: describeItem(item),
        attempt,
        durationMs: this.clock.now() - startedAt,
        error: error.message,
        cause: outcome.error,
      });
      if (this.onError !== undefined) {
        try {
          this.onError(error);
        } catch (callbackError) {
          this.logger.error("workqueue: onError callback threw", {
            error: callbackError,
          });
        }
      }
      this.queue.addRateLimited(item);
      return;
    }
    const result = outcome.result;
    if (result && result.requeueAfterMs !== undefined && result.requeueAfterMs > 0) {
      this.queue.forget(item);
      this.queue.addAfter(item, result.requeueAfterMs);
    } else if (result && result.requeue) {
      this.queue.addRateLimited(item);
    } else {
      this.queue.forget(item);
    }
  }
}
