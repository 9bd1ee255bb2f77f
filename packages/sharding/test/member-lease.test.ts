import { strict as assert } from "node:assert";
import { FakeClock } from "@tessera/core/testing";
import {
  ACKNOWLEDGED_EPOCH_ANNOTATION,
  OBJECTS_CACHED_ANNOTATION,
  SERVER_FILTERING_ANNOTATION,
  MemberFencedError,
  MemberLease,
  RING_LABEL,
} from "../src/index.js";
import { MemberTracker } from "../src/member-tracker.js";
import { ApiError, ForbiddenError, TransportError } from "@tessera/client";
import { InMemoryLeaseClient, leaseContext } from "./in-memory-lease-client.js";

const durations = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

function setup() {
  const clock = new FakeClock();
  const client = new InMemoryLeaseClient();
  const lease = new MemberLease({ client, ring: "web", identity: "pod-a", clock, ...durations });
  const stop = new AbortController();
  let running: Promise<void> = Promise.resolve();
  return {
    clock,
    client,
    lease,
    /** Runs the lease until `release` and waits until it holds the Lease. */
    start: async () => {
      running = lease.run(stop.signal);
      await lease.acquired();
    },
    /** Aborts the run; settles once the Lease was handed back. */
    release: () => {
      stop.abort();
      return running;
    },
  };
}

describe("MemberLease", () => {
  it("creates a labelled Lease held by the member and renews it every retry period", async () => {
    const { clock, client, lease, start } = setup();
    await start();
    const first = client.leases.get("web-pod-a")!;
    assert.equal(first.spec?.holderIdentity, "pod-a");
    assert.equal(first.spec?.leaseDurationSeconds, 15);
    assert.equal(first.metadata?.labels?.[RING_LABEL], "web");
    await clock.advance(2_000);
    const second = client.leases.get("web-pod-a")!;
    assert.notEqual(second.metadata?.resourceVersion, first.metadata?.resourceVersion);
    await clock.advance(60_000);
    assert.equal(lease.fence.aborted, false);
  });

  it("writes an acknowledged epoch at once", async () => {
    const { client, lease, start } = setup();
    await start();
    await lease.acknowledge(7);
    assert.equal(client.leases.get("web-pod-a")!.metadata?.annotations?.[ACKNOWLEDGED_EPOCH_ANNOTATION], "7");
    await lease.acknowledge(5); // never goes back
    assert.equal(lease.acknowledgedEpoch, 7);
  });

  it("publishes the member's report (objects cached, server filtering) with each renewal", async () => {
    const clock = new FakeClock();
    const client = new InMemoryLeaseClient();
    let report: { objectsCached?: number; serverFiltering?: boolean } = {};
    const lease = new MemberLease({
      client,
      ring: "web",
      identity: "pod-a",
      clock,
      ...durations,
      report: () => report,
    });
    const stop = new AbortController();
    const running = lease.run(stop.signal);
    await lease.acquired();
    const annotations = () => client.leases.get("web-pod-a")!.metadata?.annotations ?? {};
    assert.equal(
      annotations()[OBJECTS_CACHED_ANNOTATION],
      undefined,
      "nothing to say before the first report",
    );
    report = { objectsCached: 1234, serverFiltering: true };
    await clock.advance(2_000);
    assert.equal(annotations()[OBJECTS_CACHED_ANNOTATION], "1234");
    assert.equal(annotations()[SERVER_FILTERING_ANNOTATION], "true");
    report = { objectsCached: 17, serverFiltering: false };
    await clock.advance(2_000);
    assert.equal(annotations()[OBJECTS_CACHED_ANNOTATION], "17");
    assert.equal(annotations()[SERVER_FILTERING_ANNOTATION], "false");
    stop.abort();
    await running;
  });

  it("fences itself renewDeadline after the last successful renewal and stops renewing", async () => {
    const { clock, client, lease, start } = setup();
    await start(); // sent at t = 0
    await clock.advance(2_000); // renewed, sent at t = 2000
    client.failWith = new Error("connection refused");
    await clock.advance(9_999);
    assert.equal(lease.fence.aborted, false);
    await clock.advance(1);
    assert.equal(lease.fence.aborted, true, "fenced at 2000 + renewDeadline");
    const reason: unknown = lease.fence.reason;
    assert.ok(reason instanceof MemberFencedError && reason.reason === "renewDeadlineExceeded");
    assert.match(reason.message, /could not renew Lease test\/web-pod-a within renewDeadline \(10000 ms\)/);
    client.failWith = undefined;
    const calls = client.calls;
    await clock.advance(30_000);
    assert.equal(client.calls, calls, "a fenced member does not renew again");
  });

  it("fences on time even when a renewal hangs", async () => {
    const { clock, client, lease, start } = setup();
    await start();
    client.hang();
    await clock.advance(10_000);
    assert.equal(lease.fence.aborted, true);
    client.unhang();
  });

  it("fences before a tracker watching from the coordinator may count the member gone", async () => {
    const { clock, client, lease, start } = setup();
    const tracker = new MemberTracker(clock, 2_000);
    await start();
    let fencedAt: number | undefined;
    lease.fence.addEventListener("abort", () => (fencedAt = clock.now()));
    let goneAt: number | undefined;
    for (let t = 0; t < 40_000; t += 500) {
      if (t === 4_000) client.failWith = new Error("partitioned");
      tracker.observe([...client.leases.values()]);
      if (goneAt === undefined && !tracker.liveMembers().includes("pod-a")) goneAt = clock.now();
      await clock.advance(500);
    }
    assert.ok(fencedAt !== undefined && goneAt !== undefined);
    assert.ok(fencedAt < goneAt, `fenced at ${fencedAt}, gone at ${goneAt}`);
  });

  it("hands the Lease back on release, so the member is gone at once", async () => {
    const { clock, client, lease, start, release } = setup();
    const tracker = new MemberTracker(clock, 2_000);
    await start();
    tracker.observe([...client.leases.values()]);
    assert.deepEqual(tracker.liveMembers(), ["pod-a"]);
    await release();
    assert.equal(client.leases.get("web-pod-a")!.spec?.holderIdentity, "");
    assert.ok((lease.fence.reason as MemberFencedError).reason === "stopped");
    tracker.observe([...client.leases.values()]);
    assert.deepEqual(tracker.liveMembers(), []);
  });

  it("hands the Lease back even when a renewal was in flight or someone else wrote it", async () => {
    const { clock, client, start, release } = setup();
    await start();
    client.hang();
    await clock.advance(2_000); // a renewal is now in flight
    const released = release();
    client.unhang();
    await released;
    assert.equal(client.leases.get("web-pod-a")!.spec?.holderIdentity, "");

    const other = setup();
    await other.start();
    other.client.store(other.client.leases.get("web-pod-a")!); // a foreign write bumps the version
    await other.release();
    assert.equal(other.client.leases.get("web-pod-a")!.spec?.holderIdentity, "");
  });

  it("takes over its own Lease left by an earlier process", async () => {
    const { client, start } = setup();
    client.store({
      metadata: { name: "web-pod-a", labels: { [RING_LABEL]: "web" } },
      spec: { holderIdentity: "" },
    });
    await start();
    assert.equal(client.leases.get("web-pod-a")!.spec?.holderIdentity, "pod-a");
  });
});

describe("MemberLease.run", () => {
  it("rejects with the ApiError when the Lease cannot be taken; acquired answers false", async () => {
    const { client, lease } = setup();
    client.store({ metadata: { name: "web-pod-a" }, spec: { holderIdentity: "" } });
    const conflict = new ForbiddenError(leaseContext("update", "web-pod-a"), 403, "Forbidden", "forbidden");
    client.failWith = conflict;
    const running = lease.run(new AbortController().signal);
    assert.equal(await lease.acquired(), false);
    await assert.rejects(running, (e: unknown) => e === conflict);
    assert.equal(lease.fence.aborted, true, "a run that ended leaves the fence aborted");
  });

  it("retries a failure that may pass (a connection reset, a 503) with backoff, and holds the Lease once it clears", async () => {
    const clock = new FakeClock();
    const client = new InMemoryLeaseClient();
    const lease = new MemberLease({ client, ring: "web", identity: "pod-a", clock, ...durations });
    client.failWith = new TransportError(
      leaseContext("get", "web-pod-a"),
      0,
      "ConnectionFailed",
      "request failed: connect ECONNRESET",
    );
    const stop = new AbortController();
    const running = lease.run(stop.signal);
    let acquired: boolean | undefined;
    void lease.acquired().then((a) => (acquired = a));
    await clock.advance(5_000);
    assert.equal(acquired, undefined, "still trying, neither held nor given up");
    const attempts = client.calls;
    assert.ok(attempts >= 3, `retried: ${attempts} calls in 5 s`);
    client.failWith = new ApiError(
      leaseContext("get", "web-pod-a"),
      503,
      "ServiceUnavailable",
      "unavailable",
    );
    await clock.advance(15_000);
    assert.ok(client.calls > attempts, "a 5xx is retried too");
    client.failWith = undefined;
    // The wait already drawn can be the longest backoff: 10 s, plus up to as much again of jitter.
    await clock.advance(20_000);
    assert.equal(acquired, true);
    assert.equal(client.leases.get("web-pod-a")!.spec?.holderIdentity, "pod-a");
    stop.abort();
    await running;
  });

  it("answers acquired once it holds the Lease, false to a wait that gave up, and refuses a second run", async () => {
    const { lease, start, release } = setup();
    const gaveUp = new AbortController();
    gaveUp.abort();
    assert.equal(await lease.acquired(gaveUp.signal), false);
    await start();
    assert.equal(await lease.acquired(), true);
    await assert.rejects(lease.run(new AbortController().signal), /run\(\) was already called/);
    await release();
    assert.equal(await lease.acquired(), true, "it was acquired in that run");
  });

  it("takes nothing when its signal has aborted already", async () => {
    const { client, lease } = setup();
    const stop = new AbortController();
    stop.abort();
    await lease.run(stop.signal);
    assert.equal(await lease.acquired(), false);
    assert.equal(client.calls, 0);
  });
});

describe("MemberTracker", () => {
  it("counts a member live until its Lease is unchanged for leaseDuration + margin by its own clock", async () => {
    const clock = new FakeClock();
    const client = new InMemoryLeaseClient();
    const tracker = new MemberTracker(clock, 3_000);
    client.store({
      metadata: {
        name: "web-b",
        labels: { [RING_LABEL]: "web" },
        annotations: { [ACKNOWLEDGED_EPOCH_ANNOTATION]: "4" },
      },
      // a renewTime far in the past (another host's clock) is ignored
      spec: { holderIdentity: "b", leaseDurationSeconds: 10, renewTime: new Date(0) },
    });
    tracker.observe([...client.leases.values()]);
    assert.deepEqual(tracker.liveMembers(), ["b"]);
    assert.equal(tracker.view().acknowledged("b"), 4);
    await clock.advance(13_000);
    tracker.observe([...client.leases.values()]);
    assert.deepEqual(tracker.liveMembers(), ["b"]);
    await clock.advance(1);
    assert.deepEqual(tracker.liveMembers(), []);
    client.store(client.leases.get("web-b")!); // renewed
    tracker.observe([...client.leases.values()]);
    assert.deepEqual(tracker.liveMembers(), ["b"]);
    tracker.observe([]); // deleted
    assert.deepEqual(tracker.liveMembers(), []);
  });
});
