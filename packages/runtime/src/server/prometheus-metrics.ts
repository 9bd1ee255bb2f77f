import type { IncomingMessage, ServerResponse } from "node:http";
import type { Meter } from "@opentelemetry/api";
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import { MeterProvider } from "@opentelemetry/sdk-metrics";

/**
 * The manager's metrics: an OpenTelemetry `MeterProvider` whose reader is
 * the OpenTelemetry Prometheus exporter, served at `/metrics` by the
 * manager's own server. Every Tessera package already records through the
 * OTel metrics API, so the SDK with its Prometheus exporter exposes them
 * as they are, with no second registry (prom-client behind the API would
 * need a bridge) and an OTLP exporter one reader away. The exporter keeps
 * our names (it adds `_total` only to counters that lack it and no unit
 * suffix), so they come out as controller-runtime's; scope labels and
 * `target_info` are off, as a Prometheus user expects.
 */
export class PrometheusMetrics {
  readonly exporter: PrometheusExporter;
  readonly provider: MeterProvider;

  constructor() {
    this.exporter = new PrometheusExporter({
      preventServerStart: true,
      withoutScopeInfo: true,
      withoutTargetInfo: true,
    });
    this.provider = new MeterProvider({ readers: [this.exporter] });
  }

  /** The meter every component of the manager records with. */
  meter(scope = "@tessera/runtime"): Meter {
    return this.provider.getMeter(scope);
  }

  /** Serves the Prometheus text exposition. */
  handle(request: IncomingMessage, response: ServerResponse): void {
    this.exporter.getMetricsRequestHandler(request, response);
  }

  /** Stops the provider (a last collection, then nothing). */
  async close(): Promise<void> {
    await this.provider.shutdown();
  }
}
