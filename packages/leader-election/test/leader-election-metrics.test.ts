import { strict as assert } from "node:assert";
import { MeterProvider, MetricReader, type MetricData } from "@opentelemetry/sdk-metrics";
import { ElectionHarness } from "./election-harness.js";

class CollectingReader extends MetricReader {
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

async function read(reader: CollectingReader): Promise<Map<string, MetricData>> {
  const { resourceMetrics } = await reader.collect();
  const byName = new Map<string, MetricData>();
  for (const scope of resourceMetrics.scopeMetrics)
    for (const m of scope.metrics) byName.set(m.descriptor.name, m);
  return byName;
}

function points(
  metrics: Map<string, MetricData>,
  name: string,
): Array<{ attributes: object; value: unknown }> {
  return (metrics.get(name)?.dataPoints ?? []).map((p) => ({ attributes: p.attributes, value: p.value }));
}

describe("leader election metrics", () => {
  it("report leader status, transitions and renew failures", async () => {
    const h = new ElectionHarness();
    const readerA = new CollectingReader();
    const readerB = new CollectingReader();
    const meterA = new MeterProvider({ readers: [readerA] }).getMeter("a");
    const meterB = new MeterProvider({ readers: [readerB] }).getMeter("b");
    const a = h.add("a", { meter: meterA, name: "my-operator" });
    const b = h.add("b", { meter: meterB, name: "my-operator" });
    a.run();
    await h.clock.flush();
    b.run();
    await h.clock.advance(1_000);

    let ma = await read(readerA);
    let mb = await read(readerB);
    assert.deepEqual(points(ma, "leader_election_master_status"), [
      { attributes: { name: "my-operator" }, value: 1 },
    ]);
    assert.deepEqual(points(mb, "leader_election_master_status"), [
      { attributes: { name: "my-operator" }, value: 0 },
    ]);
    assert.deepEqual(points(ma, "leader_election_transitions"), [
      { attributes: { name: "my-operator" }, value: 1 },
    ]);

    a.lock.fault = "unreachable";
    await h.advanceUntil(() => b.elector.isLeader, 10_000);
    ma = await read(readerA);
    mb = await read(readerB);
    assert.deepEqual(points(ma, "leader_election_master_status"), [
      { attributes: { name: "my-operator" }, value: 0 },
    ]);
    assert.deepEqual(points(mb, "leader_election_master_status"), [
      { attributes: { name: "my-operator" }, value: 1 },
    ]);
    assert.deepEqual(points(mb, "leader_election_transitions"), [
      { attributes: { name: "my-operator" }, value: 1 },
    ]);
    // Renewals at 1.5, 2, 2.5 s failed before the 3 s deadline (the last success was at 1 s).
    assert.deepEqual(points(ma, "leader_election_renew_failures"), [
      { attributes: { name: "my-operator", reason: "error" }, value: 3 },
    ]);
  });
});
