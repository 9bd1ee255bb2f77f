import type {
  Attributes,
  BatchObservableCallback,
  Counter,
  Histogram,
  Meter,
  ObservableGauge,
} from "@opentelemetry/api";

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
  private readonly attributes: Attributes;
  private readonly adds: Counter;
  private readonly retries: Counter;
  private readonly queueDuration: Histogram;
  private readonly workDuration: Histogram;
  private readonly gauges: ObservableGauge[];
  private readonly observe: BatchObservableCallback;
  private closed = false;

  constructor(
    private readonly meter: Meter,
    name: string,
    source: QueueGaugeSource,
  ) {
    this.attributes = Object.freeze({ name });
    this.adds = meter.createCounter("workqueue_adds_total", {
      description: "Total number of adds handled by the workqueue",
    });
    this.retries = meter.createCounter("workqueue_retries_total", {
      description: "Total number of retries handled by the workqueue",
    });
    const histogramOptions = { unit: "s", advice: { explicitBucketBoundaries: DURATION_BUCKETS_SECONDS } };
    this.queueDuration = meter.createHistogram("workqueue_queue_duration_seconds", {
      description: "How long in seconds an item stays in the workqueue before being requested",
      ...histogramOptions,
    });
    this.workDuration = meter.createHistogram("workqueue_work_duration_seconds", {
      description: "How long in seconds processing an item from the workqueue takes",
      ...histogramOptions,
    });
    const depth = meter.createObservableGauge("workqueue_depth", {
      description: "Current depth of the workqueue",
    });
    const unfinished = meter.createObservableGauge("workqueue_unfinished_work_seconds", {
      description:
        "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. " +
        "Large values indicate stuck threads.",
      unit: "s",
    });
    const longest = meter.createObservableGauge("workqueue_longest_running_processor_seconds", {
      description: "How many seconds the longest running processor for the workqueue has been running",
      unit: "s",
    });
    this.gauges = [depth, unfinished, longest];
    this.observe = (result) => {
      const now = source.now();
      let total = 0;
      let oldest = 0;
      for (const since of source.processingSince()) {
        const age = Math.max(0, now - since);
        total += age;
        if (age > oldest) oldest = age;
      }
      result.observe(depth, source.depth(), this.attributes);
      result.observe(unfinished, total / 1000, this.attributes);
      result.observe(longest, oldest / 1000, this.attributes);
    };
    meter.addBatchObservableCallback(this.observe, this.gauges);
  }

  /** An item became dirty. */
  added(): void {
    this.adds.add(1, this.attributes);
  }

  /** A delayed or rate-limited add. */
  retried(): void {
    this.retries.add(1, this.attributes);
  }

  /** An item was handed out after waiting `waitedMs`. */
  handedOut(waitedMs: number): void {
    this.queueDuration.record(Math.max(0, waitedMs) / 1000, this.attributes);
  }

  /** Work on an item finished after `workedMs`. */
  finished(workedMs: number): void {
    this.workDuration.record(Math.max(0, workedMs) / 1000, this.attributes);
  }

  /** Stops observing the gauges (the queue is shut down and idle). Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.meter.removeBatchObservableCallback(this.observe, this.gauges);
  }
}
