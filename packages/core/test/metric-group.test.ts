import { strict as assert } from "node:assert";
import { MetricGroup } from "../src/index.js";
import { TestMetrics } from "../src/testing/index.js";

describe("MetricGroup", () => {
  let metrics: TestMetrics;
  beforeEach(() => (metrics = new TestMetrics()));
  afterEach(() => metrics.close());

  it("counters and histograms carry the group's attributes plus any extra", async () => {
    const group = new MetricGroup(metrics.meter, { reflector: "pods", resource: "v1/pods" });
    const events = group.counter("events_total", "events");
    const added = events.bind({ type: "ADDED" });
    added.add();
    added.add(2);
    events.add(1, { type: "DELETED" });
    group.histogram("sync_seconds", "sync", { unit: "s", buckets: [1, 10] }).record(3);
    assert.equal(await metrics.sum("events_total", { reflector: "pods", type: "ADDED" }), 3);
    assert.equal(await metrics.sum("events_total", { resource: "v1/pods" }), 4);
    const [histogram] = await metrics.points("sync_seconds", { reflector: "pods" });
    assert.ok(histogram);
    assert.equal(await metrics.value("sync_seconds"), 1);
  });

  it("gauges are read at collection and stop being reported after close()", async () => {
    const group = new MetricGroup(metrics.meter, { name: "q" });
    let depth = 4;
    let reads = 0;
    group.gauge("depth", "items waiting", (report) => {
      reads++;
      report(depth);
      report(depth * 2, { kind: "double" });
    });
    assert.equal(await metrics.value("depth", { name: "q" }), 4);
    depth = 5;
    assert.equal(await metrics.value("depth", { kind: "double" }), 10);
    group.close();
    group.close();
    const before = reads;
    depth = 9;
    await metrics.collect();
    assert.equal(reads, before);
    assert.notEqual(await metrics.value("depth", { name: "q" }), 9);
  });

  it("a settable gauge reads what was set last, also after the component stopped", async () => {
    const group = new MetricGroup(metrics.meter, { name: "lock" });
    const status = group.settableGauge("leading", "1 while leading");
    status.record(1);
    assert.equal(await metrics.value("leading", { name: "lock" }), 1);
    status.record(0);
    group.close();
    assert.equal(await metrics.value("leading", { name: "lock" }), 0);
  });
});
