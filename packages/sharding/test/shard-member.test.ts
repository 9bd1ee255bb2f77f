import { strict as assert } from "node:assert";
import { KubeConfig } from "@kubernetes/client-node";
import { FakeClock, TestMetrics } from "@tessera/core/testing";
import { ForbiddenError } from "@tessera/client";
import {
  ACKNOWLEDGED_EPOCH_ANNOTATION,
  MemberFencedError,
  ShardMember,
  type SlotChange,
  type VersionedAssignment,
} from "../src/index.js";
import { advanceAssignment, emptyAssignment, type Assignment } from "../src/ranges.js";
import { InMemoryLeaseClient, leaseContext } from "./in-memory-lease-client.js";

function setup() {
  const clock = new FakeClock();
  const leases = new InMemoryLeaseClient();
  const published: { current: VersionedAssignment | undefined } = { current: undefined };
  const publish = (assignment: Assignment) =>
    (published.current = { assignment, version: String(assignment.epoch) });
  const changes: SlotChange[] = [];
  let release: (() => void) | undefined;
  const metrics = new TestMetrics();
  const member = new ShardMember({
    kubeConfig: new KubeConfig(),
    namespace: "test",
    ring: "web",
    identity: "a",
    leases,
    store: { read: () => Promise.resolve(published.current) },
    clock,
    pollIntervalMs: 100,
    leaseDurationMs: 3_000,
    renewDeadlineMs: 2_000,
    retryPeriodMs: 500,
    meter: metrics.meter,
    onAssignment: (change) => {
      changes.push(change);
      if (change.lost.size === 0) return;
      return new Promise<void>((resolve) => (release = resolve)); // in-flight work finishes when the test says
    },
  });
  const acked = () => leases.leases.get("web-a")?.metadata?.annotations?.[ACKNOWLEDGED_EPOCH_ANNOTATION];
  const stop = new AbortController();
  let running: Promise<void> = Promise.resolve();
  return {
    clock,
    leases,
    member,
    publish,
    changes,
    acked,
    finishInFlight: () => release?.(),
    metrics,
    /** Runs the member until `leave` and waits until it has joined the ring. */
    join: async () => {
      running = member.run(stop.signal);
      await member.joined();
    },
    /** Aborts the run (the graceful stop); settles once the member has left. */
    leave: () => {
      stop.abort();
      return running;
    },
  };
}

describe("ShardMember", () => {
  it("applies a grant at once and acknowledges it", async () => {
    const t = setup();
    await t.join();
    const e1 = advanceAssignment(emptyAssignment(8), { members: ["a", "b"], acknowledged: () => undefined })!;
    t.publish(e1);
    await t.clock.advance(100);
    assert.deepEqual([...t.member.activeSlots], [0, 1, 2, 3]);
    assert.deepEqual([...t.changes[0]!.gained], [0, 1, 2, 3]);
    assert.equal(t.acked(), "1");
    assert.equal(await t.metrics.value("tessera_sharding_slots_owned"), 4);
    assert.equal(await t.metrics.value("tessera_sharding_ranges_owned"), 1);
    assert.equal(await t.metrics.value("tessera_sharding_epoch"), 1);
  });

  it("stops new work on released slots at once but acknowledges only after in-flight work finished", async () => {
    const t = setup();
    await t.join();
    const e1 = advanceAssignment(emptyAssignment(4), { members: ["a"], acknowledged: () => undefined })!;
    t.publish(e1);
    await t.clock.advance(100);
    const e2 = advanceAssignment(e1, { members: ["a", "b"], acknowledged: () => 1 })!;
    t.publish(e2);
    await t.clock.advance(100);
    assert.deepEqual([...t.member.activeSlots], [0, 1], "released slots leave activeSlots before the drain");
    assert.deepEqual([...t.changes[1]!.lost], [2, 3]);
    assert.equal(t.acked(), "1", "epoch 2 not acknowledged while work is in flight");
    t.finishInFlight();
    await t.clock.advance(100);
    assert.equal(t.acked(), "2");
  });

  it("drops every slot when it fences itself", async () => {
    const t = setup();
    await t.join();
    t.publish(advanceAssignment(emptyAssignment(4), { members: ["a"], acknowledged: () => undefined })!);
    await t.clock.advance(100);
    assert.equal(t.member.activeSlots.size, 4);
    t.leases.failWith = new Error("apiserver unreachable");
    await t.clock.advance(2_000);
    assert.equal(t.member.fence.aborted, true);
    assert.equal(t.member.activeSlots.size, 0);
    assert.equal(await t.metrics.value("tessera_sharding_fenced"), 1);
  });

  it("on leaving lets go of everything, then hands its Lease back", async () => {
    const t = setup();
    await t.join();
    t.publish(advanceAssignment(emptyAssignment(4), { members: ["a"], acknowledged: () => undefined })!);
    await t.clock.advance(100);
    const stopped = t.leave();
    await t.clock.advance(0);
    assert.equal(t.member.activeSlots.size, 0);
    assert.equal(
      t.leases.leases.get("web-a")!.spec?.holderIdentity,
      "a",
      "the Lease is kept until work is done",
    );
    t.finishInFlight();
    await stopped;
    assert.equal(t.leases.leases.get("web-a")!.spec?.holderIdentity, "");
  });

  it("rejects its run when the member Lease is refused for good (403), and never joins", async () => {
    const t = setup();
    t.leases.failWith = new ForbiddenError(leaseContext("create", "web-a"), 403, "Forbidden", "forbidden");
    const running = t.member.run(new AbortController().signal);
    assert.equal(await t.member.joined(), false);
    await assert.rejects(running, /403 Forbidden: forbidden/);
    assert.equal(await t.metrics.value("tessera_sharding_slots_owned"), undefined, "no metrics left behind");
  });

  it("unregisters its metrics once it has left, and joins once", async () => {
    const t = setup();
    await t.join();
    t.publish(advanceAssignment(emptyAssignment(4), { members: ["a", "b"], acknowledged: () => undefined })!);
    await t.clock.advance(100);
    assert.equal(await t.metrics.value("tessera_sharding_slots_owned"), 2);
    await assert.rejects(t.member.run(new AbortController().signal), /run\(\) was already called/);
    const left = t.leave();
    await t.clock.advance(0);
    t.finishInFlight();
    await left;
    assert.equal(t.member.activeSlots.size, 0);
    assert.equal(t.member.fence.aborted, true);
    // No longer observed: registered gauges would now read 0 slots and fenced 1.
    assert.equal(await t.metrics.value("tessera_sharding_slots_owned"), 2);
    assert.equal(await t.metrics.value("tessera_sharding_fenced"), 0);
    assert.equal((t.member.fence.reason as MemberFencedError).reason, "stopped");
  });

  it("stays fenced until its signal aborts, then leaves", async () => {
    const t = setup();
    const stop = new AbortController();
    let settled = false;
    const running = t.member.run(stop.signal).then(() => (settled = true));
    await t.member.joined();
    t.publish(advanceAssignment(emptyAssignment(4), { members: ["a"], acknowledged: () => undefined })!);
    await t.clock.advance(100);
    t.leases.failWith = new Error("apiserver unreachable");
    await t.clock.advance(2_000);
    assert.equal(t.member.fence.aborted, true);
    await t.clock.advance(10_000);
    assert.equal(settled, false, "a fenced member's run lasts until its signal aborts");
    t.leases.failWith = undefined;
    stop.abort();
    await running;
    assert.equal(t.changes.length, 1, "a fenced member calls onAssignment no more");
  });
});
