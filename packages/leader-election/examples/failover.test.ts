import { strict as assert } from "node:assert";
import { FakeClock } from "@tessera/core/testing";
import { InMemoryLock, InMemoryLockStore, LeaderElector } from "@tessera/leader-election";

describe("my operator's leader election", () => {
  it("fails over when the leader loses the API server", async () => {
    // Two replicas on one in-memory lock, on a fake clock: no server, no real time.
    const clock = new FakeClock();
    const store = new InMemoryLockStore();
    const lockA = new InMemoryLock(store, "a");
    const callbacks = { onStartedLeading: () => {} };
    const a = new LeaderElector({ lock: lockA, clock, callbacks });
    const b = new LeaderElector({ lock: new InMemoryLock(store, "b"), clock, callbacks });
    const stop = new AbortController();
    const runA = a.run(stop.signal);
    await clock.advance(1_000);
    const runB = b.run(stop.signal);
    await clock.advance(1_000);
    assert.equal(a.isLeader, true);

    // a's requests fail: it steps down 10 s (renewDeadline) after its last renewal, and b
    // takes over once it has seen the same record for 15 s (leaseDuration).
    lockA.fault = "unreachable";
    await clock.advance(30_000);
    assert.deepEqual(await runA, { led: true, reason: "renewDeadlineExceeded" });
    assert.equal(b.isLeader, true);

    stop.abort();
    assert.deepEqual(await runB, { led: true, reason: "cancelled" });
  });
});
