// The default metrics (PrometheusMetrics, without the OpenTelemetry SDK) must
// scrape exactly as the SDK with its Prometheus exporter does: the same
// names, types, units, labels, buckets and values, for the same recordings.
import { strict as assert } from "node:assert";
import type { IncomingMessage, ServerResponse } from "node:http";
import { MetricGroup } from "@tessera/core";
import { OpenTelemetrySdkMetrics, PrometheusMetrics, type MetricsEndpoint } from "../src/server.js";

/** What every package's metrics do through a MetricGroup, and the rest of the metrics API. */
function record(metrics: MetricsEndpoint): () => void {
  const meter = metrics.meter("@tessera/test");
  const group = new MetricGroup(meter, { name: "widgets", controller: "w" });
  const things = group.counter("tessera_things", "Things.\nA second line, a \\ backslash.");
  things.add();
  things.add(2, { result: "ok" });
  const errors = things.bind({ result: "error" });
  errors.add(3);
  errors.add();
  group.counter("workqueue_adds_total", "Adds").add(1.5);
  const durations = group.histogram("workqueue_queue_duration_seconds", "How long", {
    unit: "s",
    buckets: [10, 0.01, 1, 0.1],
  });
  for (const value of [0.005, 0.01, 0.1, 5, 100]) durations.record(value);
  durations.record(0.5, { quoted: 'a "b"' });
  const plain = meter.createHistogram("tessera.default.buckets");
  plain.record(7);
  plain.record(20_000);
  plain.record(-1);
  const leader = group.settableGauge("leader_election_master_status", "Leader");
  leader.record(1);
  leader.record(0);
  let depth = 4;
  group.gauge("workqueue_depth", "Depth", (report) => {
    report(depth);
    report(depth + 1, { shard: 1 });
  });
  const inFlight = meter.createUpDownCounter("tessera_in_flight", { description: "In flight" });
  inFlight.add(3);
  inFlight.add(-1);
  meter
    .createObservableCounter("tessera_observed", { description: "Observed" })
    .addCallback((result) => result.observe(42, { flag: true }));
  meter.createCounter("tessera_never_recorded", { description: "Never" });
  meter.createCounter("tessera_negative").add(-1);
  const odd = group.counter("9odd-name.x", "Odd");
  odd.add(1, { "a.b": "c", z: 1, a: 2 });
  odd.add(1, { a: 2, "a.b": "c", z: 1 });
  return () => {
    depth = 7;
    group.close();
  };
}

async function scrape(metrics: MetricsEndpoint): Promise<{ type: unknown; body: string }> {
  return await new Promise((resolve) => {
    const headers = new Map<string, unknown>();
    const response = {
      statusCode: 0,
      setHeader: (name: string, value: unknown) => headers.set(name, value),
      end: (body: string) => resolve({ type: headers.get("content-type"), body }),
    };
    metrics.handle(
      { url: "/metrics", headers: { host: "localhost" } } as IncomingMessage,
      response as unknown as ServerResponse,
    );
  });
}

describe("PrometheusMetrics (no SDK)", () => {
  it("scrapes as the OpenTelemetry SDK with its Prometheus exporter does", async () => {
    const ours = new PrometheusMetrics();
    const sdk = await OpenTelemetrySdkMetrics.create();
    const closeOurs = record(ours);
    const closeSdk = record(sdk);
    const first = await scrape(ours);
    assert.deepEqual(first, await scrape(sdk));
    assert.match(first.body, /^# TYPE workqueue_queue_duration_seconds histogram$/m);
    assert.match(first.body, /^workqueue_depth\{name="widgets",controller="w",shard="1"\} 5$/m);
    // A removed callback's gauge keeps its last value, in both.
    closeOurs();
    closeSdk();
    const second = await scrape(ours);
    assert.deepEqual(second, await scrape(sdk));
    assert.match(second.body, /^workqueue_depth\{name="widgets",controller="w"\} 4$/m);
    await sdk.close();
  });

  it("says there is nothing before anything is recorded", async () => {
    assert.equal((await scrape(new PrometheusMetrics())).body, "# no registered metrics");
  });
});
