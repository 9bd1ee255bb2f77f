import { strict as assert } from "node:assert";
import { CapturingLogger, FakeClock } from "@tessera/core/testing";
import { LOW_PRIORITY, WorkQueue } from "../src/index.js";

function newQueue(clock = new FakeClock()): WorkQueue<string> {
  return new WorkQueue<string>({ name: "test", clock });
}

/** Takes every ready item without waiting. */
function drainReady(queue: WorkQueue<string>): string[] {
  const out: string[] = [];
  for (let item = queue.tryGet(); item !== undefined; item = queue.tryGet()) out.push(item);
  return out;
}

/** Whether a promise has settled, after letting microtasks run. */
async function settledValue<V>(promise: Promise<V>): Promise<{ settled: boolean; value?: V }> {
  let state: { settled: boolean; value?: V } = { settled: false };
  void promise.then((value) => (state = { settled: true, value }));
  await new Promise<void>((resolve) => setImmediate(resolve));
  return state;
}

describe("WorkQueue", () => {
  it("hands out different items first in, first out", async () => {
    const queue = newQueue();
    for (const key of ["a", "b", "c"]) queue.add(key);
    assert.equal(queue.len(), 3);
    assert.equal(await queue.get(), "a");
    assert.equal(await queue.get(), "b");
    assert.equal(await queue.get(), "c");
    assert.equal(queue.len(), 0);
  });

  it("queues an item at most once however often it is added", () => {
    const queue = newQueue();
    queue.add("a");
    queue.add("b");
    queue.add("a");
    queue.add("a");
    assert.equal(queue.len(), 2);
    assert.deepEqual(drainReady(queue), ["a", "b"]);
  });

  it("does not hand out an item again while it is being processed", async () => {
    const queue = newQueue();
    queue.add("a");
    assert.equal(await queue.get(), "a");
    queue.add("a");
    assert.equal(queue.len(), 0, "the re-added item waits for its done");
    assert.equal(queue.tryGet(), undefined);
    const second = queue.get();
    assert.equal((await settledValue(second)).settled, false);
    queue.done("a");
    assert.equal(await second, "a", "re-added while processing, handed out again after done");
  });

  it("an item added while processing is handed out once more, not once per add", () => {
    const queue = newQueue();
    queue.add("a");
    assert.equal(queue.tryGet(), "a");
    queue.add("a");
    queue.add("a");
    queue.done("a");
    assert.deepEqual(drainReady(queue), ["a"]);
    queue.done("a");
    assert.deepEqual(drainReady(queue), []);
  });

  it("an item done without being re-added is gone", () => {
    const queue = newQueue();
    queue.add("a");
    queue.tryGet();
    queue.done("a");
    assert.equal(queue.len(), 0);
    assert.deepEqual(queue.stats().processing, 0);
  });

  it("a waiting get is served by the next add, waiting callers in call order", async () => {
    const queue = newQueue();
    const first = queue.get();
    const second = queue.get();
    queue.add("x");
    queue.add("y");
    assert.equal(await first, "x");
    assert.equal(await second, "y");
    assert.equal(queue.stats().processing, 2);
  });

  it("done for an item never handed out is ignored without corrupting the queue", () => {
    const queue = newQueue();
    queue.add("a");
    queue.add("b");
    queue.done("a"); // queued but not processing
    queue.done("never-added");
    assert.equal(queue.stats().ignoredDone, 2);
    assert.deepEqual(drainReady(queue), ["a", "b"], "no duplicate of a, order kept");
    queue.done("a");
    queue.done("a"); // a second done
    assert.equal(queue.stats().ignoredDone, 3);
    queue.add("a");
    assert.deepEqual(drainReady(queue), ["a"]);
  });

  describe("priority", () => {
    it("hands out live events before items from an initial list", () => {
      const queue = newQueue();
      queue.add("list-1", { priority: LOW_PRIORITY });
      queue.add("list-2", { priority: LOW_PRIORITY });
      queue.add("event-1");
      queue.add("list-3", { priority: LOW_PRIORITY });
      queue.add("event-2");
      assert.deepEqual(drainReady(queue), ["event-1", "event-2", "list-1", "list-2", "list-3"]);
    });

    it("a live event for a queued low-priority item raises it, without a duplicate", () => {
      const queue = newQueue();
      queue.add("a", { priority: LOW_PRIORITY });
      queue.add("b", { priority: LOW_PRIORITY });
      queue.add("c");
      queue.add("b");
      assert.equal(queue.len(), 3);
      assert.deepEqual(drainReady(queue), ["c", "b", "a"]);
      assert.equal(queue.len(), 0);
    });

    it("a low-priority add does not lower a queued item", () => {
      const queue = newQueue();
      queue.add("a");
      queue.add("b");
      queue.add("a", { priority: LOW_PRIORITY });
      queue.add("c", { priority: LOW_PRIORITY });
      assert.deepEqual(drainReady(queue), ["a", "b", "c"]);
    });

    it("the highest priority asked while processing applies when it is re-queued", () => {
      const queue = newQueue();
      queue.add("a");
      assert.equal(queue.tryGet(), "a");
      queue.add("a", { priority: LOW_PRIORITY });
      queue.add("b", { priority: LOW_PRIORITY });
      queue.add("a", { priority: 5 });
      queue.done("a");
      assert.deepEqual(drainReady(queue), ["a", "b"]);
    });

    it("rejects a priority that is not a finite number", () => {
      const queue = newQueue();
      assert.throws(() => queue.add("a", { priority: Number.NaN }), /test.*add of a.*finite/);
      assert.equal(queue.len(), 0);
    });
  });

  describe("close and drain", () => {
    it("drops and counts adds after close", () => {
      const queue = newQueue();
      queue.close();
      queue.add("a");
      queue.addAfter("b", 1_000);
      queue.addRateLimited("c");
      assert.equal(queue.len(), 0);
      assert.equal(queue.stats().droppedAfterClose, 3);
      assert.equal(queue.closed, true);
    });

    it("answers undefined to waiting gets, and hands out what is still ready first", async () => {
      const queue = newQueue();
      const waiting = queue.get();
      queue.close();
      assert.equal(await waiting, undefined);

      const other = newQueue();
      other.add("a");
      other.close();
      assert.equal(await other.get(), "a");
      assert.equal(await other.get(), undefined);
    });

    it("keeps done working: an item re-added before the close comes back once more", async () => {
      const queue = newQueue();
      queue.add("a");
      assert.equal(await queue.get(), "a");
      queue.add("a");
      queue.close();
      queue.done("a");
      assert.equal(await queue.get(), "a");
      queue.done("a");
      assert.equal(await queue.get(), undefined);
    });

    it("drops the delayed adds", () => {
      const clock = new FakeClock();
      const queue = newQueue(clock);
      queue.addAfter("a", 5_000);
      queue.close();
      assert.equal(clock.pendingTimers, 0);
      clock.advanceSync(10_000);
      assert.equal(queue.len(), 0);
    });

    it("drain waits until everything handed out is done and nothing is ready", async () => {
      const queue = newQueue();
      queue.add("a");
      queue.add("b");
      assert.equal(await queue.get(), "a");
      const drained = queue.drain();
      assert.equal((await settledValue(drained)).settled, false);
      queue.done("a");
      assert.equal((await settledValue(drained)).settled, false, "b is still ready");
      assert.equal(await queue.get(), "b");
      queue.done("b");
      assert.equal((await settledValue(drained)).settled, true);
    });

    it("drain on an idle queue resolves at once; close ends a pending drain", async () => {
      assert.equal((await settledValue(newQueue().drain())).settled, true);
      const queue = newQueue();
      queue.add("a");
      await queue.get();
      const drained = queue.drain();
      queue.close();
      assert.equal((await settledValue(drained)).settled, true);
    });

    it("logs the close with the queue's name", () => {
      const logger = new CapturingLogger();
      const lines = logger.lines;
      const queue = new WorkQueue<string>({ name: "pods", clock: new FakeClock(), logger });
      queue.add("a");
      queue.close();
      queue.add("b");
      assert.ok(lines.some((l) => /shutting down/.test(l.message) && l.fields?.["queue"] === "pods"));
      assert.ok(lines.some((l) => /dropped/.test(l.message) && l.fields?.["item"] === "b"));
    });
  });

  it("forgets the records of items done long ago, and still serves them when they come back", () => {
    const queue = newQueue();
    for (let i = 0; i < 50_000; i++) queue.add(`old-${i}`);
    for (let item = queue.tryGet(); item !== undefined; item = queue.tryGet()) queue.done(item);
    assert.equal(queue.stats().tracked, 50_000, "recently done items are remembered for reuse");
    queue.add("old-7");
    assert.equal(queue.tryGet(), "old-7");
    queue.add("old-7"); // re-added while processing: must survive the sweeps
    for (let i = 0; i < 300_000; i++) {
      queue.add(`hot-${i % 10}`);
      const item = queue.tryGet();
      assert.ok(item !== undefined);
      queue.done(item);
    }
    assert.ok(queue.stats().tracked < 20_000, `swept: ${queue.stats().tracked} records left`);
    queue.done("old-7");
    assert.deepEqual(drainReady(queue), ["old-7"], "the record of an item in processing survives sweeps");
    queue.add("old-123");
    queue.add("old-123");
    assert.deepEqual(drainReady(queue), ["old-123"], "an item whose record was swept is queued afresh, once");
    assert.deepEqual(queue.stats().processing, 2);
  });

  it("compares items like Map keys", () => {
    const queue = new WorkQueue<number>({ clock: new FakeClock() });
    queue.add(1);
    queue.add(1);
    queue.add(2);
    assert.equal(queue.len(), 2);
  });
});
