// A handler's RequeueAfterError: the item comes back after the delay it
// carries, counted as a failure, its rate-limiter history left alone; and a
// pool whose owner logs failures itself (logFailures: false) writes none.
import { strict as assert } from "node:assert";
import { CapturingLogger, FakeClock } from "@tessera/core/testing";
import { RequeueAfterError, WorkQueue, WorkerPool, type WorkItemError } from "../src/index.js";

describe("RequeueAfterError", () => {
  it("requeues after its delay, not the rate limiter's, and leaves the item's backoff as it was", async () => {
    const clock = new FakeClock();
    const logger = new CapturingLogger();
    const queue = new WorkQueue<string>({ name: "requeue-after", clock });
    const calls: number[] = [];
    const errors: WorkItemError<string>[] = [];
    const pool = new WorkerPool<string>({
      queue,
      clock,
      logger,
      logFailures: false,
      onError: (error) => errors.push(error),
      handler: () => {
        calls.push(clock.now());
        if (calls.length === 1) throw new Error("flaky"); // the rate limiter: 5 ms
        if (calls.length === 2) throw new RequeueAfterError(10_000, { cause: new Error("quota exceeded") });
      },
    });
    const stop = new AbortController();
    const running = pool.run(stop.signal);
    queue.add("a");
    await clock.flush();
    await clock.advance(5);
    assert.equal(calls.length, 2, "retried after the rate limiter's 5 ms");
    assert.equal(queue.numRequeues("a"), 1);
    await clock.advance(9_900);
    assert.equal(calls.length, 2, "not before the chosen 10 s");
    await clock.advance(1_200);
    assert.equal(calls.length, 3, "after it (its delay rounded up to the queue's one-second buckets)");
    const delay = calls[2]! - calls[1]!;
    assert.ok(delay >= 10_000 && delay < 11_000, `came back after ${delay} ms`);
    assert.equal(queue.numRequeues("a"), 0, "the success forgot it");
    assert.deepEqual(
      errors.map((e) => [e.terminal, (e.cause as Error).message]),
      [
        [false, "flaky"],
        [false, "quota exceeded (retried in 10000 ms)"],
      ],
    );
    assert.deepEqual(
      logger.lines.filter((l) => l.level === "error"),
      [],
      "logFailures: false: the owner logs",
    );
    stop.abort();
    await running;
  });

  it("refuses a delay that is not a positive number of ms", () => {
    assert.throws(() => new RequeueAfterError(0, { cause: new Error("x") }), /positive number of ms, got 0/);
  });
});
