import type { IncomingMessage, ServerResponse } from "node:http";
import type { Meter } from "@opentelemetry/api";
import type { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import type { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import type { MetricsEndpoint } from "./metrics-endpoint.js";

/** Options of {@link OpenTelemetrySdkMetrics.create}. */
export interface OpenTelemetrySdkMetricsOptions {
  /** More readers beside the Prometheus exporter, e.g. a `PeriodicExportingMetricReader` with an OTLP exporter. */
  readers?: MetricReader[];
}

/**
 * The manager's metrics through the OpenTelemetry SDK: a `MeterProvider`
 * whose readers are the OpenTelemetry Prometheus exporter (served at
 * `/metrics`, as {@link PrometheusMetrics} serves it) and any given, such as
 * an OTLP exporter. The SDK is loaded by {@link OpenTelemetrySdkMetrics.create},
 * so an operator that does not choose it does not pay its memory.
 *
 * ```ts
 * const metrics = await OpenTelemetrySdkMetrics.create({ readers: [otlpReader] });
 * const manager = await Manager.create({ metrics });
 * ```
 */
export class OpenTelemetrySdkMetrics implements MetricsEndpoint {
  private constructor(
    readonly exporter: PrometheusExporter,
    readonly provider: MeterProvider,
  ) {}

  /** Loads the SDK and its Prometheus exporter and starts the provider with them. */
  static async create(options: OpenTelemetrySdkMetricsOptions = {}): Promise<OpenTelemetrySdkMetrics> {
    const [{ PrometheusExporter }, { MeterProvider }] = await Promise.all([
      import("@opentelemetry/exporter-prometheus"),
      import("@opentelemetry/sdk-metrics"),
    ]);
    const exporter = new PrometheusExporter({
      preventServerStart: true,
      withoutScopeInfo: true,
      withoutTargetInfo: true,
    });
    const provider = new MeterProvider({ readers: [exporter, ...(options.readers ?? [])] });
    return new OpenTelemetrySdkMetrics(exporter, provider);
  }

  meter(scope = "@tessera/runtime"): Meter {
    return this.provider.getMeter(scope);
  }

  handle(request: IncomingMessage, response: ServerResponse): void {
    this.exporter.getMetricsRequestHandler(request, response);
  }

  /** Stops the provider (a last collection and export, then nothing). */
  async close(): Promise<void> {
    await this.provider.shutdown();
  }
}
