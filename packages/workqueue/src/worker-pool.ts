import {
  resolveInstrumentation,
  whenAborted,
  withFields,
  type Clock,
  type Instrumentation,
  type Logger,
  type Runnable,
} from "@tessera/core";
import { describeItem } from "./describe-item.js";
import { InFlightWork, type WorkContext } from "./in-flight-work.js";
import { WorkerPoolMetrics, type ReconcileResult } from "./worker-pool-metrics.js";
import { RequeueAfterError } from "./requeue-after-error.js";
import { WorkItemError, WorkItemTimeoutError, WorkerPoolStoppedError } from "./work-item-error.js";
import type { WorkQueue } from "./work-queue.js";

/**
 * What a handler may return to ask for the item to come back later. There is
 * no requeue without a delay (controller-runtime deprecated its `Requeue`
 * for this reason): to retry with backoff, throw; to look again after a
 * while, say how long.
 */
export interface WorkResult {
  /**
   * Process the item again after this many milliseconds (its failure history
   * is forgotten); zero or less (or absent) is a plain success.
   */
  requeueAfterMs?: number;
}

/**
 * Processes one item. Returning (nothing, or a {@link WorkResult}) is a
 * success. Throwing or rejecting requeues the item with rate limiting, unless
 * the error is (or wraps) a {@link TerminalError}: then it is not requeued.
 */
export type WorkHandler<T> = (
  item: T,
  context: WorkContext,
) => Promise<WorkResult | void> | WorkResult | void;

/**
 * Options for a {@link WorkerPool}. Of the instrumentation it uses the
 * `clock` (timeouts and durations; pass the queue's), the `logger` (every
 * line carries `queue=<name>`) and the `meter` (the
 * `controller_runtime_*` metrics, labelled `controller=<queue name>`).
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
  /**
   * Once the run's signal aborts, how long to wait for the items in flight,
   * in ms, before aborting their handlers' signals; default 30,000.
   */
  drainTimeoutMs?: number;
  /**
   * Called with every failure, after it was logged; must not throw. A
   * terminal failure is reported too: its `terminal` is true (and its
   * `cause` is what the handler threw).
   */
  onError?: (error: WorkItemError<T>) => void;
  /**
   * Whether the pool logs each failure at error (default true). False when
   * `onError` logs them itself, as the runtime's controller does (once per
   * item and error, repeats at debug).
   */
  logFailures?: boolean;
}

/** What {@link WorkerPool.run} takes besides its stop signal. */
export interface WorkerPoolRunOptions {
  /**
   * When this aborts, the pool stops as when the run's signal aborts, and
   * the handlers in flight get their signals aborted at once, with this
   * signal's reason, instead of after the drain timeout. For a right to work
   * that ended (leadership lost): another process may already be doing the
   * same work, so nothing in flight should go on.
   */
  abortInFlight?: AbortSignal;
}

/** How a {@link WorkerPool.run} ended: what its stop left behind. */
export interface WorkerPoolOutcome<T> {
  /** Every item in flight finished within the drain timeout. */
  drained: boolean;
  /** Items whose handlers were still running at the drain timeout (their signals were aborted). */
  abandoned: T[];
}

type Outcome = { ok: true; result: WorkResult | void } | { ok: false; error: unknown };

/**
 * Items started back to back at most before the pump lets the event loop
 * turn. A handler that finishes without I/O (a reconcile that finds nothing
 * to do) frees its slot in a microtask, and so does the next: without a
 * yield, a backlog (the initial list of a large cache) runs to its end
 * before any socket is read or timer fires, so watch events (and the live
 * items they would queue ahead of the backlog), Lease renewals and probes
 * wait for all of it.
 */
const STARTS_BEFORE_YIELD = 64;

/**
 * Runs a handler over the items of a {@link WorkQueue}, `concurrency` at a
 * time. It takes an item from the queue only when a slot is free, so items
 * it has not started stay in the queue (deduplicated, and visible in its
 * depth). For each item:
 *
 * - success: the rate limiter forgets the item, and it comes back after
 *   `requeueAfterMs` if the handler returned one;
 * - a throw, a rejection or a timeout: logged, reported to `onError` and
 *   requeued with rate limiting; the pool keeps going;
 * - a {@link TerminalError} (or an error caused by one): logged, counted,
 *   reported to `onError`, and never requeued; the rate limiter forgets it;
 * - a {@link RequeueAfterError}: logged, counted, reported to `onError`, and
 *   requeued after the delay it carries; the rate limiter is not asked;
 * - then `done`, only once the handler has actually returned, so an item is
 *   never processed twice at once even when a handler overruns its timeout.
 *
 * It is a {@link Runnable} that runs once: {@link WorkerPool.run} starts it,
 * and aborting the run's signal stops it gracefully. Its metrics are
 * controller-runtime's controller metrics (see {@link WorkerPoolOptions}).
 *
 * ```ts
 * const pool = new WorkerPool({ queue, concurrency: 4, timeoutMs: 60_000, handler: reconcile });
 * const stop = new AbortController();
 * const running = pool.run(stop.signal);
 * // ...
 * stop.abort();
 * const { drained, abandoned } = await running;
 * ```
 */
export class WorkerPool<T extends NonNullable<unknown>> implements Runnable<WorkerPoolOutcome<T>> {
  private readonly queue: WorkQueue<T>;
  private readonly handler: WorkHandler<T>;
  private readonly concurrency: number;
  private readonly timeoutMs: number | undefined;
  private readonly drainTimeoutMs: number;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly onError: ((error: WorkItemError<T>) => void) | undefined;
  private readonly logFailures: boolean;
  /** Slots taken: items whose handler is running and has not overrun its timeout. */
  private busySlots = 0;
  private readonly metrics: WorkerPoolMetrics;
  private readonly inFlightItems = new Map<T, InFlightWork>();
  private state: "new" | "running" | "stopping" | "stopped" = "new";
  private pumping: Promise<void> = Promise.resolve();
  private wakePump: (() => void) | undefined;

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
    const drainTimeoutMs = options.drainTimeoutMs ?? 30_000;
    if (!(drainTimeoutMs >= 0)) {
      throw new RangeError(
        `worker pool for "${options.queue.name}": drainTimeoutMs must be zero or more, got ${drainTimeoutMs}`,
      );
    }
    this.queue = options.queue;
    this.handler = options.handler;
    this.concurrency = concurrency;
    this.timeoutMs = options.timeoutMs;
    this.drainTimeoutMs = drainTimeoutMs;
    const tools = resolveInstrumentation(options, "@tessera/workqueue");
    this.clock = tools.clock;
    this.logger = withFields(tools.logger, { queue: options.queue.name });
    this.onError = options.onError;
    this.logFailures = options.logFailures ?? true;
    this.metrics = new WorkerPoolMetrics(tools.meter, options.queue.name);
  }

  /** How many items are being processed now (those past their timeout included). */
  get inFlight(): number {
    return this.inFlightItems.size;
  }

  /**
   * Takes items from the queue and processes them until `signal` aborts. Then
   * it stops taking items and closes the queue (items not yet taken stay
   * unprocessed), and waits for the items in flight, at most
   * `drainTimeoutMs`. At that deadline the handlers still running get their
   * signals aborted (with a {@link WorkerPoolStoppedError}) and are reported
   * as abandoned; their items are marked done whenever they return.
   *
   * Resolves with that outcome once stopped; with a signal that has already
   * aborted it takes nothing and just closes the queue. A pool runs once:
   * a second `run`, while running or after, rejects. See
   * {@link WorkerPoolRunOptions.abortInFlight} for a stop that does not wait.
   */
  async run(signal: AbortSignal, options: WorkerPoolRunOptions = {}): Promise<WorkerPoolOutcome<T>> {
    if (this.state !== "new") {
      throw new Error(
        this.state === "running"
          ? `worker pool for "${this.queue.name}": run called while already running; a worker pool runs once`
          : `worker pool for "${this.queue.name}": cannot start after stop; a worker pool runs once`,
      );
    }
    this.state = "running";
    const urgent = options.abortInFlight;
    const stopOn = urgent ? AbortSignal.any([signal, urgent]) : signal;
    // An aborted signal starts nothing: the pump would take a ready item synchronously.
    if (!stopOn.aborted) {
      this.logger.info("workqueue: worker pool starting", { concurrency: this.concurrency });
      this.metrics.observe({ active: () => this.inFlightItems.size, concurrency: () => this.concurrency });
      this.pumping = this.pump();
      await whenAborted(stopOn);
    }
    return this.stop(urgent);
  }

  private async stop(urgent: AbortSignal | undefined): Promise<WorkerPoolOutcome<T>> {
    this.state = "stopping";
    this.queue.close();
    this.wakePump?.();
    await this.pumping;
    let result: WorkerPoolOutcome<T> = { drained: true, abandoned: [] };
    if (this.inFlightItems.size > 0) {
      // Also while draining: the right to work may end after the stop began.
      const abortNow = () => {
        if (this.inFlightItems.size === 0) return;
        this.logger.warn("workqueue: aborting the items in flight at once", {
          reason: String(urgent?.reason),
          items: [...this.inFlightItems.keys()].map(describeItem),
        });
        for (const work of this.inFlightItems.values()) work.abort(urgent?.reason);
      };
      if (urgent?.aborted) abortNow();
      else urgent?.addEventListener("abort", abortNow, { once: true });
      const all = Promise.all([...this.inFlightItems.values()].map((f) => f.settled)).then(() => true);
      let timer: { cancel(): void } | undefined;
      const expired = new Promise<false>((resolve) => {
        timer = this.clock.setTimer(this.drainTimeoutMs, () => resolve(false));
      });
      const drained = await Promise.race([all, expired]);
      timer?.cancel();
      urgent?.removeEventListener("abort", abortNow);
      if (!drained) {
        const abandoned = [...this.inFlightItems.keys()];
        for (const [item, work] of this.inFlightItems) {
          work.abort(new WorkerPoolStoppedError(this.queue.name, item, this.drainTimeoutMs));
        }
        this.logger.warn("workqueue: worker pool drain deadline passed; abandoning items in flight", {
          drainTimeoutMs: this.drainTimeoutMs,
          items: abandoned.map(describeItem),
        });
        result = { drained: false, abandoned };
      }
    }
    this.state = "stopped";
    this.metrics.close();
    this.logger.info("workqueue: worker pool stopped", { drained: result.drained });
    return result;
  }

  private async pump(): Promise<void> {
    let started = 0;
    while (this.state === "running") {
      if (this.busySlots >= this.concurrency) {
        await this.slotFreed();
        continue;
      }
      if (started >= STARTS_BEFORE_YIELD) {
        started = 0;
        await new Promise<void>((resolve) => setImmediate(resolve));
        continue;
      }
      started++;
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
    // The slot is freed when the handler returns, or earlier when its timeout passes
    // (the handler carries on; its item is done only once it returns).
    this.busySlots++;
    let holdsSlot = true;
    const freeSlot = (): void => {
      if (!holdsSlot) return;
      holdsSlot = false;
      this.busySlots--;
      this.wakePump?.();
    };
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
            freeSlot();
          });
    this.inFlightItems.set(item, work);
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
        freeSlot();
      }
    };

    const run = async (): Promise<void> => {
      let outcome: Outcome;
      try {
        outcome = { ok: true, result: await this.handler(item, work) };
      } catch (error) {
        outcome = { ok: false, error };
      }
      finish(outcome);
    };
    // What `finish` itself throws (a logger or an onError that throws) is dropped, not left unhandled.
    run().catch(() => undefined);
  }

  private conclude(item: T, attempt: number, outcome: Outcome, startedAt: number): void {
    const durationMs = this.clock.now() - startedAt;
    if (!outcome.ok) {
      const error = new WorkItemError(this.queue.name, item, attempt, outcome.error);
      const retryAfter =
        outcome.error instanceof RequeueAfterError ? outcome.error.requeueAfterMs : undefined;
      this.metrics.reconciled("error", durationMs, error.terminal);
      if (this.logFailures) {
        this.logger.error(
          error.terminal
            ? "workqueue: processing failed with a terminal error; not requeueing"
            : retryAfter !== undefined
              ? "workqueue: processing failed; requeueing after the delay the handler chose"
              : "workqueue: processing failed; requeueing with rate limit",
          // `attempt` counted from 1, as in the error's message.
          {
            item: describeItem(item),
            attempt: attempt + 1,
            durationMs,
            error: error.message,
            cause: outcome.error,
          },
        );
      }
      if (this.onError !== undefined) {
        try {
          this.onError(error);
        } catch (callbackError) {
          this.logger.error("workqueue: onError callback threw", { error: callbackError });
        }
      }
      // A terminal failure will fail the same way again: only a new add brings the item back.
      if (error.terminal) this.queue.forget(item);
      else if (retryAfter !== undefined) this.queue.addAfter(item, retryAfter);
      else this.queue.addRateLimited(item);
      return;
    }
    const requeueAfterMs = outcome.result?.requeueAfterMs;
    let result: ReconcileResult = "success";
    this.queue.forget(item);
    if (requeueAfterMs !== undefined && requeueAfterMs > 0) {
      this.queue.addAfter(item, requeueAfterMs);
      result = "requeue_after";
    }
    this.metrics.reconciled(result, durationMs, false);
  }
}
