import type { Meter } from "@opentelemetry/api";
import { MetricGroup, type GroupCounter, type GroupHistogram } from "@tessera/core";

/** client-go's buckets for `rest_client_request_duration_seconds` (k8s.io/component-base restclient metrics). */
const REQUEST_DURATION_BUCKETS_SECONDS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

/**
 * The API request metrics of a {@link KubeTransport}, with client-go's names
 * and labels, as controller-runtime exposes them (internal: the transport
 * records every call):
 *
 * - `rest_client_requests_total` {code, method, host}: requests by HTTP
 *   status code (`<error>` when no answer came: no connection, an abort),
 *   method (`GET`, `PUT`, ...) and the server's `host:port`.
 * - `rest_client_request_duration_seconds` {verb, host}: from sending to the
 *   whole body read, failures included; `verb` is the HTTP method, as in
 *   client-go.
 */
export class RequestMetrics {
  private readonly requests: GroupCounter;
  private readonly duration: GroupHistogram;

  constructor(meter: Meter) {
    const group = new MetricGroup(meter);
    this.requests = group.counter(
      "rest_client_requests_total",
      "Number of HTTP requests, partitioned by status code, method, and host.",
    );
    this.duration = group.histogram(
      "rest_client_request_duration_seconds",
      "Request latency in seconds. Broken down by verb, and host.",
      { unit: "s", buckets: REQUEST_DURATION_BUCKETS_SECONDS },
    );
  }

  /** One request: `code` is the HTTP status, `undefined` when no answer came. */
  record(method: string, host: string, code: number | undefined, seconds: number): void {
    this.requests.add(1, { code: code === undefined ? "<error>" : String(code), method, host });
    this.duration.record(seconds, { verb: method, host });
  }
}
