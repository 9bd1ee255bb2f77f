import { strict as assert } from "node:assert";
import { CapturingLogger, FakeClock, TestMetrics } from "@tessera/core/testing";
import {
  TerminalError,
  WorkItemError,
  WorkQueue,
  WorkerPool,
  isTerminalError,
  type WorkResult,
  type WorkerPoolOutcome,
} from "../src/index.js";

/** One call of the scripted handler: the item, when it started, its attempt. */
interface Call {
  item: string;
  at: number;
  attempt: number;
}

describe("retry semantics of the worker pool", () => {
  const controller = { controller: "widgets" };
  let clock: FakeClock;
  let metrics: TestMetrics;
  let logger: CapturingLogger;
  let queue: WorkQueue<string>;
  let stop: AbortController;
  let runs: Promise<WorkerPoolOutcome<string>>[];

  /**
   * Runs a pool whose handler answers its n-th call with `answers[n]`: an
   * Error is thrown, anything else returned (nothing once the script ends).
   */
  function runPool(answers: (WorkResult | Error | undefined)[]): {
    calls: Call[];
    errors: WorkItemError<string>[];
  } {
    const calls: Call[] = [];
    const errors: WorkItemError<string>[] = [];
    const pool = new WorkerPool<string>({
      queue,
      clock,
      logger,
      meter: metrics.meter,
      onError: (error) => errors.push(error),
      handler: (item, { attempt }) => {
        calls.push({ item, at: clock.now(), attempt });
        const answer = answers[calls.length - 1];
        if (answer instanceof Error) throw answer;
        return answer;
      },
    });
    runs.push(pool.run(stop.signal));
    return { calls, errors };
  }

  beforeEach(() => {
    clock = new FakeClock();
    metrics = new TestMetrics();
    logger = new CapturingLogger();
    queue = new WorkQueue<string>({ name: "widgets", clock });
    stop = new AbortController();
    runs = [];
  });

  afterEach(async () => {
    stop.abort();
    await clock.advance(30_000);
    await Promise.all(runs);
    await metrics.close();
  });

  it("a TerminalError is not requeued, its backoff is forgotten, and it is reported and counted", async () => {
    const { calls, errors } = runPool([
      new Error("conflict"),
      new TerminalError("spec.replicas is negative"),
    ]);
    queue.add("a");
    await clock.flush();
    assert.equal(queue.numRequeues("a"), 1, "the plain error was rate-limited");
    await clock.advance(5);
    assert.equal(calls.length, 2);
    assert.equal(queue.numRequeues("a"), 0, "the terminal error forgot the item's failures");
    assert.equal(queue.stats().delayed, 0, "and did not requeue it");
    await clock.advance(1_000_000);
    assert.equal(calls.length, 2, "never retried");

    assert.deepEqual(
      errors.map((e) => e.terminal),
      [false, true],
    );
    assert.ok(errors[1]?.cause instanceof TerminalError);
    assert.match(errors[1].message, /widgets.*process a.*terminal.*spec\.replicas is negative/);
    assert.equal(logger.matching(/terminal error; not requeueing/, "error").length, 1);
    assert.equal(await metrics.sum("controller_runtime_terminal_reconcile_errors_total", controller), 1);
    assert.equal(await metrics.sum("controller_runtime_reconcile_errors_total", controller), 2);
    assert.equal(
      await metrics.sum("controller_runtime_reconcile_total", { ...controller, result: "error" }),
      2,
    );

    queue.add("a"); // a new event for the object
    await clock.flush();
    assert.equal(calls.length, 3, "a later add processes it again");
    assert.equal(calls[2]?.attempt, 0);
  });

  it("an error caused by a TerminalError is terminal too", async () => {
    const wrapped = new Error("apply widget", { cause: new TerminalError("invalid spec") });
    const { calls, errors } = runPool([wrapped]);
    queue.add("a");
    await clock.advance(60_000);
    assert.equal(calls.length, 1);
    assert.equal(errors[0]?.terminal, true);
    assert.equal(errors[0].cause, wrapped);
    assert.equal(await metrics.sum("controller_runtime_terminal_reconcile_errors_total", controller), 1);
  });

  it("isTerminalError follows the cause chain, and only that", () => {
    assert.equal(isTerminalError(new TerminalError("x")), true);
    assert.equal(
      isTerminalError(new Error("a", { cause: new Error("b", { cause: new TerminalError("c") }) })),
      true,
    );
    assert.equal(isTerminalError(new Error("plain")), false);
    assert.equal(isTerminalError("TerminalError"), false);
    assert.equal(isTerminalError(undefined), false);
    assert.equal(isTerminalError(new AggregateError([new TerminalError("one of several")])), false);
    const cyclic = new Error("cyclic");
    cyclic.cause = cyclic;
    assert.equal(isTerminalError(cyclic), false, "a cyclic chain ends");
  });

  it("requeueAfterMs brings the item back after exactly that delay, its failures forgotten", async () => {
    const { calls } = runPool([{ requeueAfterMs: 30_000 }, new Error("conflict"), { requeueAfterMs: 50 }]);
    queue.add("a");
    await clock.flush();
    await clock.advance(29_999);
    assert.equal(calls.length, 1);
    await clock.advance(1);
    assert.equal(calls.length, 2);
    assert.equal(calls[1]?.at, 30_000);
    await clock.advance(5); // the failure's rate-limited retry
    assert.equal(calls[2]?.at, 30_005);
    assert.equal(calls[2].attempt, 1);
    assert.equal(queue.numRequeues("a"), 0, "the requeueAfterMs forgot the failure");
    await clock.advance(49);
    assert.equal(calls.length, 3);
    await clock.advance(1);
    assert.equal(calls[3]?.at, 30_005 + 50);
    assert.equal(calls[3].attempt, 0);
    assert.equal(
      await metrics.sum("controller_runtime_reconcile_total", { ...controller, result: "requeue_after" }),
      2,
    );
  });

  it("a zero requeueAfterMs is a plain success", async () => {
    const { calls } = runPool([{ requeueAfterMs: 0 }]);
    queue.add("a");
    await clock.advance(60_000);
    assert.equal(calls.length, 1);
    assert.equal(
      await metrics.sum("controller_runtime_reconcile_total", { ...controller, result: "success" }),
      1,
    );
  });

  it("a plain throw is retried after the rate limiter's backoff, 5 ms doubling", async () => {
    const failure = new Error("the API server said 409");
    const { calls } = runPool([failure, failure, failure]);
    queue.add("a");
    await clock.flush();
    await clock.advance(4);
    assert.equal(calls.length, 1, "not before its backoff");
    await clock.advance(1_000);
    assert.deepEqual(
      calls.map((c) => [c.at, c.attempt]),
      [
        [0, 0],
        [5, 1],
        [15, 2],
        [35, 3],
      ],
    );
    assert.equal(queue.numRequeues("a"), 0, "forgotten after the success");
    assert.equal(await metrics.sum("controller_runtime_reconcile_errors_total", controller), 3);
    assert.equal(await metrics.sum("controller_runtime_terminal_reconcile_errors_total", controller), 0);
    assert.equal(
      await metrics.sum("controller_runtime_reconcile_total", { ...controller, result: "success" }),
      1,
    );
  });
});
