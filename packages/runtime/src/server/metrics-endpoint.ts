import type { IncomingMessage, ServerResponse } from "node:http";
import type { Meter } from "@opentelemetry/api";

/**
 * What serves a manager's `/metrics`: the meter its components record with,
 * and the Prometheus text exposition of what they recorded.
 * {@link PrometheusMetrics} is the default; {@link OpenTelemetrySdkMetrics}
 * puts the OpenTelemetry SDK behind the same endpoint, for an OTLP exporter
 * beside it.
 */
export interface MetricsEndpoint {
  /** The meter every component of the manager records with. */
  meter(scope?: string): Meter;
  /** Serves the Prometheus text exposition. */
  handle(request: IncomingMessage, response: ServerResponse): void;
  /** Stops recording (the SDK's last collection); nothing after. */
  close(): Promise<void>;
}
