import { strict as assert } from "node:assert";
import { ApiError } from "@tessera/client";
import { LeadershipEndedError } from "../src/index.js";
import { ElectionHarness, SHORT } from "./election-harness.js";
import { assertNoOverlap } from "./leading-intervals.js";

const HOUR = 3_600_000;

describe("LeaderElector (fake clock)", () => {
  describe("acquisition", () => {
    it("creates the Lease when there is none and leads, announcing itself first", async () => {
      const h = new ElectionHarness();
      const a = h.add("a");
      a.run();
      await h.clock.flush();

      assert.deepEqual(h.leaders(), ["a"]);
      assert.deepEqual(a.events, ["newLeader=a", "started"]);
      const stored = h.store.read();
      assert.equal(stored?.record.holderIdentity, "a");
      assert.equal(stored?.record.leaseDurationSeconds, 3);
      assert.equal(stored?.record.leaseTransitions, 0);
      assert.deepEqual(stored?.record.acquireTime, h.clock.wallTime());
      assert.equal(h.store.writes[0]?.verb, "create");
    });

    it("takes a released lock at once and counts the transition", async () => {
      const h = new ElectionHarness();
      h.store.put({
        holderIdentity: "",
        leaseDurationSeconds: 1,
        acquireTime: undefined,
        renewTime: undefined,
        leaseTransitions: 4,
      });
      const a = h.add("a");
      a.run();
      await h.clock.flush();
      assert.deepEqual(h.leaders(), ["a"]);
      assert.equal(h.store.read()?.record.leaseTransitions, 5);
    });

    it("of two candidates racing for a released lock, exactly one wins", async () => {
      const h = new ElectionHarness();
      h.store.put({
        holderIdentity: "",
        leaseDurationSeconds: 1,
        acquireTime: undefined,
        renewTime: undefined,
        leaseTransitions: 0,
      });
      const a = h.add("a");
      const b = h.add("b");
      a.run();
      b.run();
      await h.clock.advance(5_000);
      assert.equal(h.leaders().length, 1);
      const loser = h.leaders()[0] === "a" ? b : a;
      assert.equal(loser.elector.leader, h.leaders()[0]);
      assertNoOverlap(h.intervals());
    });
  });

  describe("renewal", () => {
    it("renews every retry period, keeping acquireTime and the transition count", async () => {
      const h = new ElectionHarness();
      const a = h.add("a");
      a.run();
      await h.clock.flush();
      const acquired = h.store.read()!.record;
      await h.clock.advance(60_000);

      assert.deepEqual(h.leaders(), ["a"]);
      const record = h.store.read()!.record;
      assert.deepEqual(record.acquireTime, acquired.acquireTime);
      assert.equal(record.leaseTransitions, 0);
      assert.deepEqual(record.renewTime, new Date(acquired.renewTime!.getTime() + 60_000));
      // One create, then one renewal per 500 ms.
      assert.equal(h.store.writes.length, 1 + 60_000 / SHORT.retryPeriodMs);
      assert.equal(a.elector.healthy, true);
    });

    it("keeps a candidate waiting for as long as the leader renews", async () => {
      const h = new ElectionHarness();
      const a = h.add("a");
      const b = h.add("b");
      a.run();
      await h.clock.flush();
      b.run();
      await h.clock.advance(120_000);
      assert.deepEqual(h.leaders(), ["a"]);
      assert.equal(b.elector.leader, "a");
      assert.deepEqual(b.events, ["newLeader=a"]);
    });
  });

  describe("expiry is judged by observed time, never by the holder's renewTime", () => {
    for (const [label, offset] of [
      ["an hour in the past", -HOUR],
      ["an hour in the future", HOUR],
    ] as const) {
      it(`a holder whose renewTime reads ${label} is given a full lease duration from first sight`, async () => {
        const h = new ElectionHarness();
        const stamp = new Date(h.clock.wallTime().getTime() + offset);
        h.store.put({
          holderIdentity: "ghost",
          leaseDurationSeconds: 3,
          acquireTime: stamp,
          renewTime: stamp,
          leaseTransitions: 2,
        });
        const b = h.add("b");
        b.run();
        await h.clock.advance(2_990);
        assert.deepEqual(h.leaders(), [], "took over before seeing the record unchanged for 3 s");
        assert.equal(b.elector.leader, "ghost");
        await h.clock.advance(10);
        assert.deepEqual(h.leaders(), ["b"], "the lease was observed unchanged for 3 s");
        assert.equal(h.store.read()?.record.leaseTransitions, 3);
        assert.deepEqual(b.events, ["newLeader=ghost", "newLeader=b", "started"]);
      });
    }

    it("restarts its observation every time the record changes", async () => {
      const h = new ElectionHarness();
      const ghost = {
        holderIdentity: "ghost",
        leaseDurationSeconds: 3,
        acquireTime: h.clock.wallTime(),
        renewTime: h.clock.wallTime(),
        leaseTransitions: 0,
      };
      h.store.put(ghost);
      const b = h.add("b");
      b.run();
      // The ghost renews every 2.5 s, always inside b's 3 s window.
      for (let i = 1; i <= 8; i++) {
        await h.clock.advance(2_500);
        h.store.put({ ...ghost, renewTime: new Date(ghost.renewTime.getTime() + i) });
      }
      assert.deepEqual(h.leaders(), []);
      const lastChange = h.clock.now();
      const waited = await h.advanceUntil(() => h.leaders().length > 0, 10_000);
      assert.ok(waited >= 3_000, `took over ${waited} ms after the last change`);
      assert.equal(h.clock.now() - lastChange, waited);
    });

    it("a skewed wall clock on the candidate changes nothing", async () => {
      const h = new ElectionHarness();
      const a = h.add("a", { releaseOnCancel: false });
      a.run();
      await h.clock.flush();
      h.clock.skewWallTime(-10 * HOUR);
      const b = h.add("b");
      b.run();
      await h.clock.advance(30_000);
      assert.deepEqual(h.leaders(), ["a"]);
    });
  });

  describe("stopping", () => {
    it("without release: the next candidate takes over once the lease is observed expired", async () => {
      const h = new ElectionHarness();
      const a = h.add("a", { releaseOnCancel: false });
      const b = h.add("b");
      a.run();
      await h.clock.flush();
      b.run();
      await h.clock.advance(1_000);
      const crashedAt = h.clock.now();
      a.stop.abort();
      assert.deepEqual(await a.result, { led: true, reason: "cancelled" });
      assert.equal(h.store.read()?.record.holderIdentity, "a", "the lock was not released");
      const failover = await h.advanceUntil(() => b.elector.isLeader, 10_000);
      // At most one lease duration after b last saw a's final renewal, which
      // it sees within one jittered retry (0.5 s × (1 + 0.5 × 1.2) = 0.8 s).
      assert.ok(failover <= SHORT.leaseDurationMs + 800, `failover took ${failover} ms`);
      assert.ok(b.intervals[0]!.start >= crashedAt + SHORT.leaseDurationMs - SHORT.retryPeriodMs);
      assert.equal(h.store.read()?.record.leaseTransitions, 1);
      assertNoOverlap(h.intervals());
    });

    it("with release: the lock is handed back and the next candidate takes it on its next retry", async () => {
      const h = new ElectionHarness();
      const a = h.add("a");
      const b = h.add("b");
      a.run();
      await h.clock.flush();
      b.run();
      await h.clock.advance(1_000);
      a.stop.abort();
      assert.deepEqual(await a.result, { led: true, reason: "cancelled" });
      const released = h.store.writes.at(-1)!.record;
      assert.equal(released.holderIdentity, "");
      assert.equal(released.leaseDurationSeconds, 1);
      const failover = await h.advanceUntil(() => b.elector.isLeader, 10_000, 1);
      // b retries every 0.5 s × (1 + 0.5 × 1.2) = 0.8 s with random() = 0.5.
      assert.ok(failover <= 800, `failover took ${failover} ms`);
      assertNoOverlap(h.intervals());
    });

    it("still releases when its last renewal took effect although the response was lost", async () => {
      const h = new ElectionHarness();
      const a = h.add("a");
      const b = h.add("b");
      a.run();
      await h.clock.flush();
      b.run();
      await h.clock.advance(1_000);
      a.lock.fault = "lose-responses";
      await h.clock.advance(SHORT.retryPeriodMs); // this renewal lands; a never hears so
      a.lock.fault = undefined;
      a.stop.abort();
      await a.result;
      assert.equal(h.store.read()?.record.holderIdentity, "");
      const failover = await h.advanceUntil(() => b.elector.isLeader, 10_000, 1);
      assert.ok(failover <= 800, `failover took ${failover} ms`);
    });

    it("calls back in order: newLeader, started, signal aborted, stopped", async () => {
      const h = new ElectionHarness();
      const a = h.add("a");
      a.run();
      await h.clock.advance(1_000);
      a.stop.abort();
      await a.result;
      assert.deepEqual(a.events, ["newLeader=a", "started", "aborted", "stopped"]);
      const reason: unknown = a.signals[0]!.reason;
      assert.ok(reason instanceof LeadershipEndedError);
      assert.equal(reason.reason, "cancelled");
    });

    it("a candidate cancelled before leading returns without calling onStoppedLeading", async () => {
      const h = new ElectionHarness();
      const a = h.add("a");
      const b = h.add("b");
      a.run();
      await h.clock.flush();
      b.run();
      await h.clock.advance(1_000);
      b.stop.abort();
      assert.deepEqual(await b.result, { led: false, reason: "cancelled" });
      assert.deepEqual(b.events, ["newLeader=a"]);
    });

    it("waits for the work started under the signal before releasing", async () => {
      const h = new ElectionHarness();
      let finished = false;
      const a = h.add("a", {
        work: (signal) =>
          new Promise<void>((resolve) =>
            signal.addEventListener("abort", () => {
              h.clock.setTimer(700, () => {
                finished = true;
                resolve();
              });
            }),
          ),
      });
      a.run();
      await h.clock.advance(1_000);
      a.stop.abort();
      await h.clock.advance(600);
      assert.equal(h.store.read()?.record.holderIdentity, "a", "released before the work finished");
      await h.clock.advance(200);
      assert.equal(finished, true);
      await a.result;
      assert.equal(h.store.read()?.record.holderIdentity, "");
    });

    it("can campaign again after run() returned, and refuses a second concurrent run()", async () => {
      const h = new ElectionHarness();
      const a = h.add("a");
      a.run();
      await h.clock.flush();
      await assert.rejects(a.elector.run(new AbortController().signal), /already in progress/);
      a.stop.abort();
      await a.result;
      a.run();
      await h.clock.flush();
      assert.deepEqual(h.leaders(), ["a"]);
      assert.equal(a.events.filter((e) => e === "started").length, 2);
    });
  });

  describe("a leader that cannot renew", () => {
    for (const fault of ["unreachable", "hang"] as const) {
      it(`(${fault}) aborts its signal renewDeadline after its last renewal, before anyone takes over`, async () => {
        const h = new ElectionHarness();
        const a = h.add("a");
        const b = h.add("b");
        a.run();
        await h.clock.flush();
        b.run();
        await h.clock.advance(2_000);
        const lastRenewal = h.clock.now(); // renewals fall on whole multiples of 500 ms
        a.lock.fault = fault;

        await h.advanceUntil(() => !a.elector.isLeader, 5_000, 1);
        assert.equal(a.intervals[0]!.end, lastRenewal + SHORT.renewDeadlineMs);
        await h.clock.advance(1_000); // the release attempt may itself have to time out
        assert.deepEqual(await a.result, { led: true, reason: "renewDeadlineExceeded" });
        const reason: unknown = a.signals[0]!.reason;
        assert.ok(reason instanceof LeadershipEndedError && reason.reason === "renewDeadlineExceeded");

        const health = a.elector.health();
        assert.equal(health.healthy, false);
        assert.match(
          health.reason ?? "",
          /could not renew Lease default\/test within renewDeadline \(2000 ms\)/,
        );
        assert.match(health.reason ?? "", /last error: update leases.coordination.k8s.io default\/test/);

        await h.advanceUntil(() => b.elector.isLeader, 10_000);
        assert.ok(b.intervals[0]!.start >= lastRenewal + SHORT.leaseDurationMs);
        assertNoOverlap(h.intervals());
        assert.deepEqual(a.events, ["newLeader=a", "started", "aborted", "stopped"]);
      });
    }

    it("steps down at once when it finds the lock held by someone else", async () => {
      const h = new ElectionHarness();
      const a = h.add("a");
      a.run();
      await h.clock.advance(1_000);
      h.store.put({
        holderIdentity: "usurper",
        leaseDurationSeconds: 30,
        acquireTime: h.clock.wallTime(),
        renewTime: h.clock.wallTime(),
        leaseTransitions: 1,
      });
      await h.clock.advance(SHORT.retryPeriodMs);
      assert.equal(a.elector.isLeader, false);
      assert.deepEqual(await a.result, { led: true, reason: "leaseTaken" });
      assert.deepEqual(a.events, ["newLeader=a", "started", "aborted", "newLeader=usurper", "stopped"]);
      assert.equal(
        h.store.read()?.record.holderIdentity,
        "usurper",
        "release must not clobber the new holder",
      );
    });

    it("recovers when one renewal fails but the next succeeds inside the deadline", async () => {
      const h = new ElectionHarness();
      const a = h.add("a");
      a.run();
      await h.clock.advance(1_000);
      a.lock.fault = "unreachable";
      await h.clock.advance(1_000); // renewals at 1.5 s and 2 s fail; the deadline is 3 s
      a.lock.fault = undefined;
      await h.clock.advance(10_000);
      assert.deepEqual(h.leaders(), ["a"]);
      assert.equal(a.intervals.length, 1);
      assert.equal(a.elector.healthy, true);
    });
  });

  describe("missing permissions", () => {
    it("never leads, reports unhealthy, and names the verb and the Lease", async () => {
      const h = new ElectionHarness();
      const a = h.add("a");
      a.lock.fault = "forbidden";
      a.run();
      await h.clock.advance(5_000);
      assert.deepEqual(h.leaders(), []);
      const err = a.elector.lastError;
      assert.ok(err instanceof ApiError);
      assert.equal(err.verb, "get");
      assert.equal(err.code, 403);
      assert.match(err.message, /^get leases.coordination.k8s.io default\/test: 403 Forbidden/);
      assert.deepEqual(a.elector.health(), { healthy: false, leading: false, reason: err.message });
      a.lock.fault = undefined;
      await h.clock.advance(2_000);
      assert.deepEqual(h.leaders(), ["a"]);
      assert.equal(a.elector.healthy, true);
    });
  });
});
