import type { Meter } from "@opentelemetry/api";
import { MetricGroup, type GroupCounter, type GroupHistogram } from "@tessera/core";

/** How one processing of an item ended, as `controller_runtime_reconcile_total` labels it. */
export type ReconcileResult = "success" | "error" | "requeue_after";

/** What the observable gauges read from a running pool at collection time. */
export interface PoolGaugeSource {
  /** Handlers running now (those past their timeout included). */
  active(): number;
  /** The pool's concurrency. */
  concurrency(): number;
}

/** Seconds: controller-runtime's buckets for the reconcile time, 5 ms to 60 s. */
const RECONCILE_TIME_BUCKETS_SECONDS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25,
  1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

/**
 * The worker pool's OpenTelemetry instruments, named as controller-runtime
 * names its controller metrics so that operators' dashboards and alerts
 * work, each data point labelled `controller=<queue name>`:
 *
 * - `controller_runtime_reconcile_total` (counter, `result` = `success`,
 *   `error` or `requeue_after`): every processing of an item, by outcome. A
 *   terminal error and a timeout are errors. (controller-runtime's
 *   `requeue` result is never produced: handlers no longer return a
 *   requeue without a delay.)
 * - `controller_runtime_reconcile_errors_total` (counter): failures, the
 *   terminal ones included
 * - `controller_runtime_terminal_reconcile_errors_total` (counter): failures
 *   by a `TerminalError`, which are not retried
 * - `controller_runtime_reconcile_time_seconds` (histogram): from the
 *   handler's start until it returned, whatever the outcome
 * - `controller_runtime_active_workers` (gauge): handlers running
 * - `controller_runtime_max_concurrent_reconciles` (gauge): the concurrency
 *
 * The gauges are observed while the pool runs ({@link WorkerPoolMetrics.observe}
 * until {@link WorkerPoolMetrics.close}). Internal to the package.
 */
export class WorkerPoolMetrics {
  private readonly group: MetricGroup;
  private readonly results: Record<ReconcileResult, { add(value?: number): void }>;
  private readonly errors: GroupCounter;
  private readonly terminalErrors: GroupCounter;
  private readonly reconcileTime: GroupHistogram;

  constructor(meter: Meter, controller: string) {
    this.group = new MetricGroup(meter, { controller });
    const total = this.group.counter(
      "controller_runtime_reconcile_total",
      "Total number of reconciliations per controller",
    );
    this.results = {
      success: total.bind({ result: "success" }),
      error: total.bind({ result: "error" }),
      requeue_after: total.bind({ result: "requeue_after" }),
    };
    this.errors = this.group.counter(
      "controller_runtime_reconcile_errors_total",
      "Total number of reconciliation errors per controller",
    );
    this.terminalErrors = this.group.counter(
      "controller_runtime_terminal_reconcile_errors_total",
      "Total number of terminal reconciliation errors per controller",
    );
    this.reconcileTime = this.group.histogram(
      "controller_runtime_reconcile_time_seconds",
      "Length of time per reconciliation per controller",
      { unit: "s", buckets: RECONCILE_TIME_BUCKETS_SECONDS },
    );
    // Present at zero from the start, as controller-runtime initialises them: a rate() needs a first point.
    for (const result of Object.values(this.results)) result.add(0);
    this.errors.add(0);
    this.terminalErrors.add(0);
  }

  /** Starts observing the gauges (the pool's run began). */
  observe(source: PoolGaugeSource): void {
    this.group.gauge(
      "controller_runtime_active_workers",
      "Number of currently used workers per controller",
      (report) => report(source.active()),
    );
    this.group.gauge(
      "controller_runtime_max_concurrent_reconciles",
      "Maximum number of concurrent reconciles per controller",
      (report) => report(source.concurrency()),
    );
  }

  /** One processing ended with `result` after `durationMs`; `terminal` for a TerminalError. */
  reconciled(result: ReconcileResult, durationMs: number, terminal: boolean): void {
    this.results[result].add();
    if (result === "error") {
      this.errors.add();
      if (terminal) this.terminalErrors.add();
    }
    this.reconcileTime.record(Math.max(0, durationMs) / 1000);
  }

  /** Stops observing the gauges (the run ended). Counters keep counting handlers that return late. Idempotent. */
  close(): void {
    this.group.close();
  }
}
