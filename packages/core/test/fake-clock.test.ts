import { strict as assert } from "node:assert";
import { SystemClock } from "../src/index.js";
import { FakeClock } from "../src/testing/index.js";

describe("FakeClock", () => {
  it("stands still until advanced, then fires due timers in time order, each at its own instant", () => {
    const clock = new FakeClock({ startMs: 1_000 });
    const fired: [string, number][] = [];
    clock.setTimer(300, () => fired.push(["c", clock.now()]));
    clock.setTimer(100, () => fired.push(["a", clock.now()]));
    clock.setTimer(100, () => fired.push(["b", clock.now()]));
    assert.equal(clock.now(), 1_000);
    clock.advanceSync(200);
    assert.deepEqual(fired, [
      ["a", 1_100],
      ["b", 1_100],
    ]);
    assert.equal(clock.now(), 1_200);
    clock.advanceSync(100);
    assert.deepEqual(fired.at(-1), ["c", 1_300]);
    assert.equal(clock.pendingTimers, 0);
  });

  it("fires timers started by callbacks within the same advance", () => {
    const clock = new FakeClock();
    const fired: number[] = [];
    clock.setTimer(10, () => {
      fired.push(clock.now());
      clock.setTimer(10, () => fired.push(clock.now()));
    });
    clock.advanceSync(25);
    assert.deepEqual(fired, [10, 20]);
  });

  it("does not fire cancelled timers and counts only live ones", () => {
    const clock = new FakeClock();
    let fired = false;
    const timer = clock.setTimer(10, () => (fired = true));
    clock.setTimer(20, () => {});
    assert.equal(clock.pendingTimers, 2);
    timer.cancel();
    timer.cancel();
    assert.equal(clock.pendingTimers, 1);
    assert.equal(clock.nextTimerDue(), 20);
    clock.advanceSync(100);
    assert.equal(fired, false);
    assert.equal(clock.pendingTimers, 0);
  });

  it("advance lets promise chains run between timers", async () => {
    const clock = new FakeClock();
    const seen: number[] = [];
    clock.setTimer(5, () => {
      void Promise.resolve().then(() => clock.setTimer(5, () => seen.push(clock.now())));
    });
    await clock.advance(10);
    assert.deepEqual(seen, [10]);
  });
});

describe("SystemClock", () => {
  it("reads a monotonic clock and cancels timers", () => {
    const clock = new SystemClock();
    const a = clock.now();
    assert.ok(clock.now() >= a);
    let fired = false;
    clock.setTimer(1, () => (fired = true)).cancel();
    assert.equal(fired, false);
  });
});
