import { strict as assert } from "node:assert";
import { FakeClock } from "@tessera/core/testing";
import { LOW_PRIORITY, WorkQueue, bucketFireTime, delayGranularityMs } from "../src/index.js";

function drainReady(queue: WorkQueue<string>): string[] {
  const out: string[] = [];
  for (let item = queue.tryGet(); item !== undefined; item = queue.tryGet()) out.push(item);
  return out;
}

describe("delayed adds", () => {
  let clock: FakeClock;
  let queue: WorkQueue<string>;
  beforeEach(() => {
    clock = new FakeClock();
    queue = new WorkQueue<string>({ name: "delays", clock });
  });

  it("a long delay is filed in a one-second bucket: never early, late by less than a second", () => {
    clock.advanceSync(250); // now = 250 ms
    queue.addAfter("a", 30_000); // ready at 30.25 s
    clock.advanceSync(29_999);
    assert.equal(queue.len(), 0, "not before its ready time");
    clock.advanceSync(1); // 30.25 s
    assert.equal(queue.len(), 0, "waits for the end of its one-second bucket");
    clock.advanceSync(749); // 30.999 s
    assert.equal(queue.len(), 0);
    clock.advanceSync(1); // 31 s
    assert.deepEqual(drainReady(queue), ["a"]);
  });

  it("items of one second share one bucket and fire in one tick", () => {
    queue.addAfter("a", 12_100);
    queue.addAfter("b", 12_900);
    queue.addAfter("c", 12_400);
    queue.addAfter("d", 13_001);
    clock.advanceSync(12_999);
    assert.equal(queue.len(), 0);
    clock.advanceSync(1);
    assert.deepEqual(drainReady(queue), ["a", "b", "c"], "one bucket, in filing order");
    assert.equal(queue.stats().delayTicks, 1);
    clock.advanceSync(1_000);
    assert.deepEqual(drainReady(queue), ["d"]);
    assert.equal(queue.stats().delayTicks, 2);
  });

  it("short delays get finer buckets", () => {
    assert.equal(delayGranularityMs(5), 1);
    assert.equal(delayGranularityMs(99), 1);
    assert.equal(delayGranularityMs(100), 10);
    assert.equal(delayGranularityMs(999), 10);
    assert.equal(delayGranularityMs(1_000), 100);
    assert.equal(delayGranularityMs(10_000), 1_000);
    queue.addAfter("retry", 5);
    clock.advanceSync(4);
    assert.equal(queue.len(), 0);
    clock.advanceSync(1);
    assert.deepEqual(drainReady(queue), ["retry"], "a 5 ms retry fires at 5 ms, not at the next second");
    queue.addAfter("later", 150); // at 5 ms: ready at 155 ms, bucket of 10 ms ends at 160 ms
    assert.equal(bucketFireTime(5, 150), 160);
    clock.advanceSync(154);
    assert.equal(queue.len(), 0);
    clock.advanceSync(1);
    assert.equal(queue.len(), 1);
  });

  it("for the same item the earlier time wins", () => {
    queue.addAfter("a", 60_000);
    queue.addAfter("a", 20_000);
    queue.addAfter("a", 40_000);
    assert.equal(queue.stats().delayed, 1);
    clock.advanceSync(20_000);
    assert.deepEqual(drainReady(queue), ["a"]);
    queue.done("a");
    clock.advanceSync(60_000);
    assert.deepEqual(drainReady(queue), [], "the superseded fire times leave nothing behind");
  });

  it("an immediate add supersedes a delayed one", () => {
    queue.addAfter("a", 10_000);
    queue.add("a");
    assert.equal(queue.stats().delayed, 0);
    assert.deepEqual(drainReady(queue), ["a"]);
    queue.done("a");
    clock.advanceSync(20_000);
    assert.deepEqual(drainReady(queue), []);
  });

  it("a delayed add of an item already queued does nothing", () => {
    queue.add("a");
    queue.addAfter("a", 5_000);
    assert.equal(queue.stats().delayed, 0);
    assert.deepEqual(drainReady(queue), ["a"]);
    queue.done("a");
    clock.advanceSync(10_000);
    assert.deepEqual(drainReady(queue), []);
  });

  it("a delayed add of an item being processed fires after its delay and waits for its done", () => {
    queue.add("a");
    assert.equal(queue.tryGet(), "a");
    queue.addAfter("a", 2_000);
    clock.advanceSync(2_000);
    assert.equal(queue.len(), 0, "still processing");
    assert.equal(queue.stats().depth, 1);
    queue.done("a");
    assert.deepEqual(drainReady(queue), ["a"]);
  });

  it("a zero, negative or NaN delay means now", () => {
    queue.addAfter("zero", 0);
    queue.addAfter("negative", -5_000);
    queue.addAfter("nan", Number.NaN);
    assert.deepEqual(drainReady(queue), ["zero", "negative", "nan"]);
    assert.equal(clock.pendingTimers, 0);
  });

  it("a zero delay supersedes a pending delay of the same item", () => {
    queue.addAfter("a", 30_000);
    queue.addAfter("a", 0);
    assert.deepEqual(drainReady(queue), ["a"]);
    assert.equal(queue.stats().delayed, 0);
  });

  it("many pending items cost one timer, and a tick only touches the items due", () => {
    for (let i = 0; i < 10_000; i++) queue.addAfter(`k${i}`, 10_000 + (i % 100) * 1_000);
    assert.equal(clock.pendingTimers, 1);
    assert.equal(queue.stats().delayed, 10_000);
    clock.advanceSync(10_000);
    assert.equal(queue.len(), 100, "only the first second's bucket fired");
    assert.equal(queue.stats().delayed, 9_900);
    assert.equal(clock.pendingTimers, 1);
    assert.equal(clock.nextTimerDue(), 11_000);
    clock.advanceSync(99_000);
    assert.equal(queue.len(), 10_000);
    assert.equal(queue.stats().delayTicks, 100);
    assert.equal(clock.pendingTimers, 0, "no timer once nothing waits");
  });

  it("re-arms the one timer when an earlier bucket appears", () => {
    queue.addAfter("late", 50_000);
    assert.equal(clock.nextTimerDue(), 50_000);
    queue.addAfter("early", 3_000);
    assert.equal(clock.pendingTimers, 1);
    assert.equal(clock.nextTimerDue(), 3_000);
    clock.advanceSync(3_000);
    assert.deepEqual(drainReady(queue), ["early"]);
    assert.equal(clock.nextTimerDue(), 50_000);
  });

  it("buckets fire in time order even when filed out of order", () => {
    queue.addAfter("c", 30_000);
    queue.addAfter("a", 10_000);
    queue.addAfter("b", 20_000);
    clock.advanceSync(60_000);
    assert.deepEqual(drainReady(queue), ["a", "b", "c"]);
  });

  it("a delayed item keeps its priority when it fires", () => {
    queue.addAfter("resync", 1_000, { priority: LOW_PRIORITY });
    queue.addAfter("event", 1_000);
    clock.advanceSync(1_000);
    assert.deepEqual(drainReady(queue), ["event", "resync"]);
  });
});
