import { strict as assert } from "node:assert";
import type { MetricData } from "@opentelemetry/sdk-metrics";
import { TestMetrics } from "@tessera/core/testing";
import { ElectionHarness } from "./election-harness.js";

function points(
  metrics: Map<string, MetricData>,
  name: string,
): Array<{ attributes: object; value: unknown }> {
  return (metrics.get(name)?.dataPoints ?? []).map((p) => ({ attributes: p.attributes, value: p.value }));
}

describe("leader election metrics", () => {
  it("report leader status, transitions and renew failures", async () => {
    const h = new ElectionHarness();
    const metricsA = new TestMetrics();
    const metricsB = new TestMetrics();
    const a = h.add("a", { meter: metricsA.meter, name: "my-operator" });
    const b = h.add("b", { meter: metricsB.meter, name: "my-operator" });
    a.run();
    await h.clock.flush();
    b.run();
    await h.clock.advance(1_000);

    let ma = await metricsA.collect();
    let mb = await metricsB.collect();
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
    ma = await metricsA.collect();
    mb = await metricsB.collect();
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
