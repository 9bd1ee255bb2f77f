import { strict as assert } from "node:assert";
import { FakeClock } from "../src/testing/index.js";

describe("FakeClock", () => {
  it("fires timers in order, each at its own instant", async () => {
    const clock = new FakeClock();
    const fired: Array<[string, number]> = [];
    clock.setTimer(300, () => fired.push(["c", clock.now()]));
    clock.setTimer(100, () => fired.push(["a", clock.now()]));
    clock.setTimer(100, () => fired.push(["b", clock.now()]));
    clock.setTimer(1000, () => fired.push(["late", clock.now()]));
    await clock.advance(500);
    assert.deepEqual(fired, [
      ["a", 100],
      ["b", 100],
      ["c", 300],
    ]);
    assert.equal(clock.now(), 500);
    assert.equal(clock.pendingTimers, 1);
  });

  it("runs timers that timers set, and the promise chains they start, within one advance", async () => {
    const clock = new FakeClock();
    const sleep = (ms: number) => new Promise<void>((resolve) => clock.setTimer(ms, resolve));
    const seen: number[] = [];
    void (async () => {
      for (let i = 0; i < 3; i++) {
        await sleep(100);
        await Promise.resolve();
        seen.push(clock.now());
      }
    })();
    await clock.advance(1000);
    assert.deepEqual(seen, [100, 200, 300]);
  });

  it("does not fire a cancelled timer", async () => {
    const clock = new FakeClock();
    let fired = false;
    const timer = clock.setTimer(10, () => (fired = true));
    timer.cancel();
    await clock.advance(100);
    assert.equal(fired, false);
    assert.equal(clock.pendingTimers, 0);
  });

  it("keeps wall time apart from monotonic time", async () => {
    const clock = new FakeClock({ startMs: 50, wallTime: new Date("2030-05-01T00:00:00Z") });
    await clock.advance(1500);
    assert.equal(clock.now(), 1550);
    assert.equal(clock.wallTime().toISOString(), "2030-05-01T00:00:01.500Z");
    clock.skewWallTime(-60_000);
    assert.equal(clock.wallTime().toISOString(), "2030-04-30T23:59:01.500Z");
    assert.equal(clock.now(), 1550);
  });
});
