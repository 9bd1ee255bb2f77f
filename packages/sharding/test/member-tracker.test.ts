import { strict as assert } from "node:assert";
import type { V1Lease } from "@kubernetes/client-node";
import { FakeClock } from "@tessera/core/testing";
import { ACKNOWLEDGED_EPOCH_ANNOTATION } from "../src/index.js";
import { MemberTracker } from "../src/member-tracker.js";

/** A member Lease as the API server lists it: 15 s duration, held unless `holder` is "". */
function lease(
  name: string,
  version: string,
  { holder = name, acked }: { holder?: string; acked?: number } = {},
) {
  return {
    metadata: {
      name,
      resourceVersion: version,
      ...(acked !== undefined ? { annotations: { [ACKNOWLEDGED_EPOCH_ANNOTATION]: String(acked) } } : {}),
    },
    spec: { ...(holder ? { holderIdentity: holder } : {}), leaseDurationSeconds: 15 },
  } satisfies V1Lease;
}

describe("MemberTracker", () => {
  const margin = 2_000;

  it("a member is live while its Lease changes within its duration plus the margin, by the tracker's clock", async () => {
    const clock = new FakeClock();
    const tracker = new MemberTracker(clock, margin);
    tracker.observe([lease("a", "1"), lease("b", "2")]);
    await clock.advance(10_000);
    tracker.observe([lease("a", "3"), lease("b", "2")]); // a renewed, b did not
    await clock.advance(7_001);
    assert.deepEqual(tracker.liveMembers(), ["a"]);
  });

  it("a partial copy (a watch's) never ends a membership: a Lease it leaves out or shows handed back asks for a fresh listing", () => {
    const clock = new FakeClock();
    const tracker = new MemberTracker(clock, margin);
    tracker.observe([lease("a", "1"), lease("b", "2")]);
    const behind = [lease("a", "1")]; // b's Lease missing
    tracker.observe(behind, { complete: false });
    assert.deepEqual(tracker.liveMembers(), ["a", "b"]);
    assert.equal(tracker.losesMembers(behind), true);
    const released = [lease("a", "1"), lease("b", "5", { holder: "" })];
    tracker.observe(released, { complete: false });
    assert.deepEqual(tracker.liveMembers(), ["a", "b"]);
    assert.equal(tracker.losesMembers(released), true);
    // The fresh listing decides.
    tracker.observe(released);
    assert.deepEqual(tracker.liveMembers(), ["a"]);
    assert.equal(tracker.losesMembers(released), false);
  });

  it("a copy that stopped moving (the watch down) makes members look expired; a fresh listing that shows them renewed keeps them", async () => {
    const clock = new FakeClock();
    const tracker = new MemberTracker(clock, margin);
    const stale = [lease("a", "1"), lease("b", "2")];
    tracker.observe(stale, { complete: false });
    await clock.advance(20_000); // no renewal reached the watch for longer than duration + margin
    tracker.observe(stale, { complete: false });
    assert.equal(tracker.losesMembers(stale), true, "the coordinator must list afresh before deciding");
    const fresh = [lease("a", "7"), lease("b", "8")];
    tracker.observe(fresh);
    assert.deepEqual(tracker.liveMembers(), ["a", "b"]);
    assert.equal(tracker.losesMembers(fresh), false);
    // The stale copy shown again is old news: neither a renewal nor a step back of the acknowledgement.
    await clock.advance(17_001);
    tracker.observe(stale, { complete: false });
    assert.deepEqual(tracker.liveMembers(), [], "versions seen before counted as renewals");
  });

  it("a version seen before in a partial copy does not take the acknowledged epoch back", () => {
    const clock = new FakeClock();
    const tracker = new MemberTracker(clock, margin);
    tracker.observe([lease("a", "1", { acked: 4 })], { complete: false });
    tracker.observe([lease("a", "2", { acked: 5 })]);
    tracker.observe([lease("a", "1", { acked: 4 })], { complete: false });
    assert.equal(tracker.view().acknowledged("a"), 5);
  });
});
