import type { Attributes, Meter } from "@opentelemetry/api";
import {
  MeterProvider,
  MetricReader,
  type DataPoint,
  type Histogram,
  type MetricData,
} from "@opentelemetry/sdk-metrics";

/** A reader that exports nothing and is collected from on demand. */
class OnDemandReader extends MetricReader {
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

/** A data point's value: a number for counters and gauges, a histogram for histograms. */
export type PointValue = number | Histogram;

/**
 * A real OpenTelemetry meter whose data points a test reads back, collected
 * on demand (cumulative). Pass {@link TestMetrics.meter} as a component's
 * `meter` option.
 *
 * ```ts
 * const metrics = new TestMetrics();
 * const queue = new WorkQueue<string>({ name: "q", meter: metrics.meter });
 * queue.add("a");
 * assert.equal(await metrics.sum("workqueue_adds_total", { name: "q" }), 1);
 * ```
 */
export class TestMetrics {
  private readonly reader = new OnDemandReader();
  private readonly provider = new MeterProvider({ readers: [this.reader] });
  /** The meter to hand to the component under test. */
  readonly meter: Meter = this.provider.getMeter("test");

  /** Every metric collected now, by name. */
  async collect(): Promise<Map<string, MetricData>> {
    const { resourceMetrics } = await this.reader.collect();
    const byName = new Map<string, MetricData>();
    for (const scope of resourceMetrics.scopeMetrics) {
      for (const metric of scope.metrics) byName.set(metric.descriptor.name, metric);
    }
    return byName;
  }

  /** The data points of metric `name` whose attributes include every entry of `where`. */
  async points(name: string, where: Attributes = {}): Promise<DataPoint<PointValue>[]> {
    const metric = (await this.collect()).get(name);
    if (!metric) return [];
    return (metric.dataPoints as DataPoint<PointValue>[]).filter((p) => matches(p.attributes, where));
  }

  /**
   * The value of the first data point of `name` matching `where`: a number
   * for a counter or gauge, the histogram's count for a histogram;
   * `undefined` when there is none.
   */
  async value(name: string, where: Attributes = {}): Promise<number | undefined> {
    const [point] = await this.points(name, where);
    return point === undefined ? undefined : scalar(point.value);
  }

  /** The sum over the matching points of `name` (histograms count their records); 0 when none. */
  async sum(name: string, where: Attributes = {}): Promise<number> {
    let total = 0;
    for (const point of await this.points(name, where)) total += scalar(point.value);
    return total;
  }

  /** Shuts the meter provider down. */
  async close(): Promise<void> {
    await this.provider.shutdown();
  }
}

function matches(attributes: Attributes, where: Attributes): boolean {
  return Object.entries(where).every(([k, v]) => attributes[k] === v);
}

function scalar(value: PointValue): number {
  return typeof value === "number" ? value : value.count;
}
