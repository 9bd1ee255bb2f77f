import type { Meter } from "@opentelemetry/api";
import { MetricGroup, type GroupCounter, type GroupGauge, type GroupHistogram } from "@tessera/core";

/**
 * controller-runtime's webhook metrics, by the webhook's path (`webhook`
 * label): requests by HTTP status code, latency, and requests in flight.
 */
export class WebhookMetrics {
  private readonly group: MetricGroup;
  private readonly requests: GroupCounter;
  private readonly latency: GroupHistogram;
  private readonly inFlightGauge: GroupGauge;
  private readonly inFlight = new Map<string, number>();

  constructor(meter: Meter) {
    this.group = new MetricGroup(meter);
    this.requests = this.group.counter(
      "controller_runtime_webhook_requests_total",
      "Total number of admission requests by HTTP status code.",
    );
    this.latency = this.group.histogram(
      "controller_runtime_webhook_latency_seconds",
      "Histogram of the latency of processing admission requests",
      { unit: "s" },
    );
    this.inFlightGauge = this.group.settableGauge(
      "controller_runtime_webhook_requests_in_flight",
      "Current number of admission requests being served.",
    );
  }

  /** A request to `webhook` started; the function returned records its end with the HTTP status code. */
  start(webhook: string, startedAt: number, now: () => number): (code: number) => void {
    this.track(webhook, +1);
    return (code) => {
      this.track(webhook, -1);
      this.requests.add(1, { webhook, code: String(code) });
      this.latency.record((now() - startedAt) / 1000, { webhook });
    };
  }

  /** Shows `webhook` at zero before its first request, as controller-runtime initialises its series. */
  declare(webhook: string): void {
    if (!this.inFlight.has(webhook)) this.track(webhook, 0);
  }

  private track(webhook: string, delta: number): void {
    const value = (this.inFlight.get(webhook) ?? 0) + delta;
    this.inFlight.set(webhook, value);
    this.inFlightGauge.record(value, { webhook });
  }
}
