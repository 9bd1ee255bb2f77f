import { strict as assert } from "node:assert";
import { sleep, SystemClock } from "../src/index.js";
import { FakeClock } from "../src/testing/index.js";

describe("FakeClock.advanceToNext", () => {
  it("finds a timer that a promise continuation starts, after the pending promises settle", async () => {
    const clock = new FakeClock();
    const fired: number[] = [];
    // The timer does not exist yet when advanceToNext is called: it is set
    // from a continuation a few promise hops later, as a retry loop does.
    void Promise.resolve()
      .then(() => undefined)
      .then(() => clock.setTimer(250, () => fired.push(clock.now())));
    assert.equal(clock.pendingTimers, 0);
    await clock.advanceToNext();
    assert.deepEqual(fired, [250]);
    assert.equal(clock.now(), 250);
  });

  it("fires every timer due at the next instant and no later one", async () => {
    const clock = new FakeClock({ startMs: 100 });
    const fired: string[] = [];
    clock.setTimer(50, () => fired.push("a"));
    clock.setTimer(50, () => fired.push("b"));
    clock.setTimer(60, () => fired.push("c"));
    await clock.advanceToNext();
    assert.deepEqual(fired, ["a", "b"]);
    assert.equal(clock.now(), 150);
  });

  it("with nothing pending, leaves time where it is", async () => {
    const clock = new FakeClock({ startMs: 7 });
    await clock.advanceToNext();
    assert.equal(clock.now(), 7);
  });

  it("reports pending delays soonest first, without cancelled timers", () => {
    const clock = new FakeClock();
    clock.setTimer(30, () => {});
    const cancelled = clock.setTimer(5, () => {});
    clock.setTimer(10, () => {});
    cancelled.cancel();
    assert.deepEqual(clock.pendingDelays(), [10, 30]);
    assert.equal(clock.nextTimerDue(), 10);
  });
});

describe("sleep", () => {
  it("resolves after the delay on the given clock", async () => {
    const clock = new FakeClock();
    let done = false;
    void sleep(clock, 1_000).then(() => (done = true));
    await clock.advance(999);
    assert.equal(done, false);
    await clock.advance(1);
    assert.equal(done, true);
  });

  it("resolves at once when the signal aborts, and cancels its timer", async () => {
    const clock = new FakeClock();
    const controller = new AbortController();
    const slept = sleep(clock, 60_000, controller.signal);
    assert.equal(clock.pendingTimers, 1);
    controller.abort();
    await slept;
    assert.equal(clock.pendingTimers, 0);
  });
});

describe("SystemClock beyond the setTimeout limit", () => {
  it("does not fire a timer longer than 24.8 days early (setTimeout alone would fire it at once)", async () => {
    const clock = new SystemClock();
    let fired = false;
    const timer = clock.setTimer(30 * 24 * 3_600_000, () => (fired = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(fired, false);
    timer.cancel();
  });

  it("stamps wall time from the system", () => {
    const before = Date.now();
    const wall = new SystemClock().wallTime().getTime();
    assert.ok(wall >= before && wall <= Date.now());
  });
});
