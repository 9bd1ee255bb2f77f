import type { IncomingMessage, ServerResponse } from "node:http";
import type { Meter } from "@opentelemetry/api";
import type { MetricsEndpoint } from "./metrics-endpoint.js";
import { PrometheusMeterProvider } from "./prometheus-meter-provider.js";

/**
 * The manager's metrics, by default: a {@link PrometheusMeterProvider}
 * behind the OpenTelemetry metrics API, served at `/metrics` by the
 * manager's own server. Every Tessera package records through the OTel
 * metrics API, so they are exposed as they are, under the names, types and
 * labels the OpenTelemetry SDK with its Prometheus exporter gave them
 * (`_total` added only to counters that lack it, no unit suffix, no scope
 * labels or `target_info`), without loading the SDK (about 30 MiB of an idle
 * process). For OTLP, views or exemplars use {@link OpenTelemetrySdkMetrics}.
 */
export class PrometheusMetrics implements MetricsEndpoint {
  readonly provider = new PrometheusMeterProvider();

  /** The meter every component of the manager records with (one for every scope). */
  meter(_scope?: string): Meter {
    return this.provider.getMeter();
  }

  /** Serves the Prometheus text exposition. */
  handle(_request: IncomingMessage, response: ServerResponse): void {
    this.provider.collect().then(
      (text) => {
        response.statusCode = 200;
        response.setHeader("content-type", "text/plain");
        response.end(text);
      },
      (error: unknown) => {
        response.statusCode = 500;
        response.end(`# failed to collect metrics: ${String(error)}`);
      },
    );
  }

  /** Nothing to flush: a scrape reads the values in place. */
  async close(): Promise<void> {}
}
