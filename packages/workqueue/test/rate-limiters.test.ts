import { strict as assert } from "node:assert";
import { FakeClock } from "@tessera/core/testing";
import {
  BucketRateLimiter,
  ExponentialFailureRateLimiter,
  FastSlowRateLimiter,
  MaxOfRateLimiter,
  WorkQueue,
  defaultControllerRateLimiter,
  type RateLimiter,
} from "../src/index.js";

function delays<T>(limiter: RateLimiter<T>, item: T, n: number): number[] {
  return Array.from({ length: n }, () => limiter.when(item));
}

describe("rate limiters", () => {
  describe("ExponentialFailureRateLimiter", () => {
    it("doubles from 5 ms per failure of an item and caps at 1000 s", () => {
      const limiter = new ExponentialFailureRateLimiter<string>();
      assert.deepEqual(delays(limiter, "a", 5), [5, 10, 20, 40, 80]);
      assert.equal(limiter.numRequeues("a"), 5);
      const later = delays(limiter, "a", 20);
      assert.equal(later[12], 5 * 2 ** 17, "the 18th failure: 655.36 s");
      assert.ok(
        later.slice(13).every((d) => d === 1_000_000),
        "from the 19th failure on: the 1000 s cap",
      );
      assert.equal(Math.max(...later), 1_000_000);
    });

    it("keeps items apart and starts over after forget", () => {
      const limiter = new ExponentialFailureRateLimiter<string>({ baseDelayMs: 1, maxDelayMs: 1_000 });
      delays(limiter, "a", 3);
      assert.equal(limiter.when("b"), 1);
      assert.equal(limiter.when("a"), 8);
      limiter.forget("a");
      assert.equal(limiter.numRequeues("a"), 0);
      assert.equal(limiter.when("a"), 1);
      assert.equal(limiter.numRequeues("b"), 1);
    });

    it("stays at the cap after a thousand failures (no overflow)", () => {
      const limiter = new ExponentialFailureRateLimiter<string>();
      const all = delays(limiter, "a", 1_100);
      assert.equal(all.at(-1), 1_000_000);
      assert.ok(all.every((d) => Number.isFinite(d) && d >= 5));
    });

    it("rejects negative delays", () => {
      assert.throws(() => new ExponentialFailureRateLimiter({ baseDelayMs: -1 }), RangeError);
    });
  });

  describe("BucketRateLimiter", () => {
    it("lets a burst of 100 through at once, then spaces retries at 10 per second", () => {
      const clock = new FakeClock();
      const limiter = new BucketRateLimiter<string>({ clock });
      const burst = Array.from({ length: 100 }, (_, i) => limiter.when(`k${i}`));
      assert.ok(burst.every((d) => d === 0));
      assert.equal(limiter.when("x"), 100);
      assert.equal(limiter.when("y"), 200);
      assert.equal(limiter.when("z"), 300);
      assert.equal(limiter.numRequeues("x"), 0);
    });

    it("refills at qps up to the burst", () => {
      const clock = new FakeClock();
      const limiter = new BucketRateLimiter<string>({ qps: 10, burst: 100, clock });
      for (let i = 0; i < 100; i++) limiter.when("k");
      assert.equal(limiter.when("k"), 100, "empty: the next token is 100 ms away");
      clock.advanceSync(1_000); // +10 tokens, one of them already promised
      const afterSecond = Array.from({ length: 9 }, () => limiter.when("k"));
      assert.ok(afterSecond.every((d) => d === 0));
      assert.equal(limiter.when("k"), 100);
      clock.advanceSync(3_600_000); // an hour: full again, not more
      const full = Array.from({ length: 101 }, () => limiter.when("k"));
      assert.equal(full.filter((d) => d === 0).length, 100);
      assert.equal(full.at(-1), 100);
    });

    it("with one token per second and a burst of one, the second retry waits a second", () => {
      const clock = new FakeClock({ startMs: 10_000 });
      const limiter = new BucketRateLimiter<string>({ qps: 1, burst: 1, clock });
      assert.equal(limiter.when("a"), 0);
      assert.equal(limiter.when("a"), 1_000);
    });

    it("rejects a rate of zero", () => {
      assert.throws(() => new BucketRateLimiter({ qps: 0 }), RangeError);
    });
  });

  describe("FastSlowRateLimiter", () => {
    it("is fast for the first attempts, slow after, per item", () => {
      const limiter = new FastSlowRateLimiter<string>({
        fastDelayMs: 5,
        slowDelayMs: 10_000,
        maxFastAttempts: 3,
      });
      assert.deepEqual(delays(limiter, "a", 5), [5, 5, 5, 10_000, 10_000]);
      assert.equal(limiter.when("b"), 5);
      assert.equal(limiter.numRequeues("a"), 5);
      limiter.forget("a");
      assert.equal(limiter.when("a"), 5);
    });
  });

  describe("MaxOfRateLimiter", () => {
    it("takes the longest delay, the most requeues, and forgets everywhere", () => {
      const fastSlow = new FastSlowRateLimiter<string>({
        fastDelayMs: 3,
        slowDelayMs: 1_000,
        maxFastAttempts: 2,
      });
      const exponential = new ExponentialFailureRateLimiter<string>({ baseDelayMs: 1, maxDelayMs: 100_000 });
      const limiter = new MaxOfRateLimiter(fastSlow, exponential);
      assert.deepEqual(delays(limiter, "a", 4), [3, 3, 1_000, 1_000]);
      assert.equal(limiter.numRequeues("a"), 4);
      assert.deepEqual(delays(limiter, "a", 8).slice(-2), [1_024, 2_048]);
      limiter.forget("a");
      assert.equal(fastSlow.numRequeues("a"), 0);
      assert.equal(exponential.numRequeues("a"), 0);
    });

    it("needs at least one limiter", () => {
      assert.throws(() => new MaxOfRateLimiter(), RangeError);
    });
  });

  describe("defaultControllerRateLimiter", () => {
    it("backs off one item exponentially from 5 ms", () => {
      const limiter = defaultControllerRateLimiter<string>({ clock: new FakeClock() });
      assert.deepEqual(delays(limiter, "a", 4), [5, 10, 20, 40]);
      assert.equal(limiter.numRequeues("a"), 4);
    });

    it("spreads a storm of first failures at 10 per second after a burst of 100", () => {
      const limiter = defaultControllerRateLimiter<string>({ clock: new FakeClock() });
      const first = Array.from({ length: 120 }, (_, i) => limiter.when(`k${i}`));
      assert.ok(first.slice(0, 100).every((d) => d === 5));
      assert.deepEqual(first.slice(100, 103), [100, 200, 300]);
      assert.equal(first.at(-1), 2_000);
    });
  });

  describe("through the queue", () => {
    it("addRateLimited waits the limiter's delay, counts requeues, and forget resets them", () => {
      const clock = new FakeClock();
      const queue = new WorkQueue<string>({ clock });
      queue.add("a");
      assert.equal(queue.tryGet(), "a");
      queue.addRateLimited("a"); // 5 ms
      queue.done("a");
      assert.equal(queue.numRequeues("a"), 1);
      clock.advanceSync(4);
      assert.equal(queue.len(), 0);
      clock.advanceSync(1);
      assert.equal(queue.tryGet(), "a");
      queue.addRateLimited("a"); // 10 ms
      queue.done("a");
      clock.advanceSync(9);
      assert.equal(queue.len(), 0);
      clock.advanceSync(1);
      assert.equal(queue.tryGet(), "a");
      assert.equal(queue.numRequeues("a"), 2);
      queue.forget("a");
      queue.done("a");
      assert.equal(queue.numRequeues("a"), 0);
    });

    it("uses an injected rate limiter", () => {
      const clock = new FakeClock();
      const queue = new WorkQueue<string>({
        clock,
        rateLimiter: new FastSlowRateLimiter({ fastDelayMs: 1_000, slowDelayMs: 60_000, maxFastAttempts: 1 }),
      });
      queue.addRateLimited("a");
      clock.advanceSync(999);
      assert.equal(queue.len(), 0);
      clock.advanceSync(1);
      assert.equal(queue.len(), 1);
    });
  });
});
