import type { Meter } from "@opentelemetry/api";
import { MetricGroup } from "@tessera/core";
import type { WorkQueue } from "@tessera/workqueue";

/**
 * The backlog of one ring member, for a HorizontalPodAutoscaler through a
 * Prometheus adapter: more replicas take more slots, so a growing backlog
 * scales the ring out. Gauges, labelled `ring` and `member`:
 *
 * - `tessera_ring_backlog_depth`: requests waiting in the member's queue;
 * - `tessera_ring_backlog_oldest_seconds`: how long the oldest has waited.
 */
export class RingBacklogMetrics {
  private readonly group: MetricGroup;

  constructor(meter: Meter, ring: string, member: string, queue: WorkQueue<string>) {
    this.group = new MetricGroup(meter, { ring, member });
    this.group.gauge("tessera_ring_backlog_depth", "Requests waiting in this ring member's queue", (report) =>
      report(queue.stats().depth),
    );
    this.group.gauge(
      "tessera_ring_backlog_oldest_seconds",
      "How long the request waiting longest in this ring member's queue has waited",
      (report) => report(queue.oldestWaitingMs() / 1000),
      { unit: "s" },
    );
  }

  close(): void {
    this.group.close();
  }
}
