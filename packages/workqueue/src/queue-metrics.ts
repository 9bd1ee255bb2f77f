import type { Meter } from "@opentelemetry/api";
import { MetricGroup, type GroupCounter, type GroupHistogram } from "@tessera/core";

/** What the observable gauges read from a queue at collection time. */
export interface QueueGaugeSource {
  /** Items waiting to be handed out, counting those re-added while processing. */
  depth(): number;
  /** The clock reading at which each item now processing was handed out. */
  processingSince(): Iterable<number>;
  /** The clock reading now, in ms. */
  now(): number;
}

/** Seconds, for the duration histograms: 10 ns to 1000 s in decades, like client-go's. */
const DURATION_BUCKETS_SECONDS = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000];

/**
 * The work queue's OpenTelemetry instruments, named as client-go and
 * controller-runtime name their Prometheus metrics so existing dashboards
 * work, each data point labelled `name=<queue name>`:
 *
 * - `workqueue_depth` (gauge): items waiting
 * - `workqueue_adds_total` (counter): adds that queued an item
 * - `workqueue_queue_duration_seconds` (histogram): from add to hand-out
 * - `workqueue_work_duration_seconds` (histogram): from hand-out to done
 * - `workqueue_unfinished_work_seconds` (gauge): summed age of the work in progress
 * - `workqueue_longest_running_processor_seconds` (gauge): age of the oldest work in progress
 * - `workqueue_retries_total` (counter): delayed and rate-limited adds
 *
 * The gauges are observed when the meter collects, so they cost nothing per
 * operation. Internal to the package; the queue creates it from its `meter`.
 */
export class QueueMetrics {
  private readonly group: MetricGroup;
  private readonly adds: GroupCounter;
  private readonly retries: GroupCounter;
  private readonly queueDuration: GroupHistogram;
  private readonly workDuration: GroupHistogram;

  constructor(meter: Meter, name: string, source: QueueGaugeSource) {
    this.group = new MetricGroup(meter, { name });
    this.adds = this.group.counter("workqueue_adds_total", "Total number of adds handled by the workqueue");
    this.retries = this.group.counter(
      "workqueue_retries_total",
      "Total number of retries handled by the workqueue",
    );
    const seconds = { unit: "s", buckets: DURATION_BUCKETS_SECONDS };
    this.queueDuration = this.group.histogram(
      "workqueue_queue_duration_seconds",
      "How long in seconds an item stays in the workqueue before being requested",
      seconds,
    );
    this.workDuration = this.group.histogram(
      "workqueue_work_duration_seconds",
      "How long in seconds processing an item from the workqueue takes",
      seconds,
    );
    this.group.gauge("workqueue_depth", "Current depth of the workqueue", (report) => report(source.depth()));
    this.group.gauge(
      "workqueue_unfinished_work_seconds",
      "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. " +
        "Large values indicate stuck threads.",
      (report) => report(ages(source).total / 1000),
      { unit: "s" },
    );
    this.group.gauge(
      "workqueue_longest_running_processor_seconds",
      "How many seconds the longest running processor for the workqueue has been running",
      (report) => report(ages(source).oldest / 1000),
      { unit: "s" },
    );
    // Present at zero from the start, as client-go's are.
    this.adds.add(0);
    this.retries.add(0);
  }

  /** An item became dirty. */
  added(): void {
    this.adds.add();
  }

  /** A delayed or rate-limited add. */
  retried(): void {
    this.retries.add();
  }

  /** An item was handed out after waiting `waitedMs`. */
  handedOut(waitedMs: number): void {
    this.queueDuration.record(Math.max(0, waitedMs) / 1000);
  }

  /** Work on an item finished after `workedMs`. */
  finished(workedMs: number): void {
    this.workDuration.record(Math.max(0, workedMs) / 1000);
  }

  /** Stops observing the gauges (the queue is closed and idle). Idempotent. */
  close(): void {
    this.group.close();
  }
}

/** The summed and the largest age, in ms, of the work in progress. */
function ages(source: QueueGaugeSource): { total: number; oldest: number } {
  const now = source.now();
  let total = 0;
  let oldest = 0;
  for (const since of source.processingSince()) {
    const age = Math.max(0, now - since);
    total += age;
    if (age > oldest) oldest = age;
  }
  return { total, oldest };
}
