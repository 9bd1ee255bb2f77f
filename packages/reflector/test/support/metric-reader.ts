import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import type { Meter } from "@opentelemetry/api";

/** A real OpenTelemetry meter whose points a test can read back. */
export class TestMetrics {
  private readonly exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  private readonly reader = new PeriodicExportingMetricReader({
    exporter: this.exporter,
    exportIntervalMillis: 3_600_000,
  });
  private readonly provider = new MeterProvider({ readers: [this.reader] });
  readonly meter: Meter = this.provider.getMeter("test");

  /** The summed value of counter `name` over points whose attributes include `where`. */
  async sum(name: string, where: Record<string, string> = {}): Promise<number> {
    const result = await this.reader.collect();
    let total = 0;
    for (const scope of result.resourceMetrics.scopeMetrics) {
      for (const metric of scope.metrics) {
        if (metric.descriptor.name !== name) continue;
        for (const point of metric.dataPoints) {
          const attrs = point.attributes as Record<string, unknown>;
          if (Object.entries(where).every(([k, v]) => attrs[k] === v)) {
            const value = point.value as number | { count: number };
            total += typeof value === "number" ? value : value.count;
          }
        }
      }
    }
    return total;
  }

  async shutdown(): Promise<void> {
    await this.provider.shutdown();
  }
}
