import { strict as assert } from "node:assert";
import { Backoff } from "../src/index.js";
import { FakeClock } from "../src/testing/index.js";

describe("Backoff", () => {
  it("doubles from 800 ms to a 30 s cap with no jitter", () => {
    const clock = new FakeClock();
    const b = new Backoff(clock, () => 0.99, { jitter: 0 });
    const delays = Array.from({ length: 9 }, () => b.next());
    assert.deepEqual(delays, [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000]);
  });

  it("adds up to as much again at random (jitter 1.0)", () => {
    const clock = new FakeClock();
    assert.equal(new Backoff(clock, () => 0).next(), 800);
    assert.equal(new Backoff(clock, () => 0.25).next(), 1000);
    assert.ok(new Backoff(clock, () => 0.999999).next() < 1600);
  });

  it("resets to the initial delay only after more than two minutes without a failure", () => {
    const clock = new FakeClock();
    const b = new Backoff(clock, () => 0, {});
    b.next();
    b.next();
    clock.advanceSync(120_000);
    assert.equal(b.next(), 3200, "exactly two minutes is not more than two minutes");
    clock.advanceSync(120_001);
    assert.equal(b.next(), 800);
  });

  it("takes its parameters from options", () => {
    const b = new Backoff(new FakeClock(), () => 0, { initialMs: 10, factor: 3, maxMs: 100 });
    assert.deepEqual([b.next(), b.next(), b.next(), b.next(), b.next()], [10, 30, 90, 100, 100]);
    b.reset();
    assert.equal(b.next(), 10);
  });
});
