import { strict as assert } from "node:assert";
import type { Logger } from "@tessera/core";
import { CapturingLogger, FakeClock } from "@tessera/core/testing";
import {
  WorkItemError,
  WorkItemTimeoutError,
  WorkQueue,
  WorkerPool,
  WorkerPoolStoppedError,
  type WorkContext,
  type WorkResult,
  type WorkerPoolOutcome,
} from "../src/index.js";

interface Deferred<V> {
  promise: Promise<V>;
  resolve(value: V): void;
  reject(error: unknown): void;
}

function deferred<V = void>(): Deferred<V> {
  let resolve!: (value: V) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<V>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

interface Call {
  item: string;
  context: WorkContext;
  result: Deferred<WorkResult | void>;
  open: boolean;
}

/** A handler whose calls the test finishes by hand, one deferred per call. */
class ControlledHandler {
  readonly calls: Call[] = [];
  running = 0;
  maxRunning = 0;
  readonly runningItems = new Set<string>();
  overlap = false;

  readonly handle = async (item: string, context: WorkContext): Promise<WorkResult | void> => {
    if (this.runningItems.has(item)) this.overlap = true;
    this.runningItems.add(item);
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    const result = deferred<WorkResult | void>();
    this.calls.push({ item, context, result, open: true });
    try {
      return await result.promise;
    } finally {
      this.running--;
      this.runningItems.delete(item);
    }
  };

  /** The still-unfinished calls, in start order. */
  open(): Call[] {
    return this.calls.filter((c) => c.open);
  }
}

function finish(call: Call, value?: WorkResult): void {
  call.open = false;
  call.result.resolve(value);
}

function fail(call: Call, error: unknown): void {
  call.open = false;
  call.result.reject(error);
}

/** A pool's run, and its stop: aborting the run's signal. */
interface Running {
  outcome: Promise<WorkerPoolOutcome<string>>;
  /** Aborts the run's signal; resolves with the run's outcome. */
  stop(): Promise<WorkerPoolOutcome<string>>;
}

describe("WorkerPool", () => {
  let clock: FakeClock;
  let queue: WorkQueue<string>;
  let handler: ControlledHandler;
  let runs: Running[];

  function newPool(
    options: {
      concurrency?: number;
      timeoutMs?: number;
      drainTimeoutMs?: number;
      logger?: Logger;
      onError?: (e: WorkItemError<string>) => void;
    } = {},
  ) {
    return new WorkerPool<string>({ queue, clock, handler: handler.handle, ...options });
  }

  /** Runs `pool` until the test (or the teardown) stops it. */
  function start(pool: WorkerPool<string>): Running {
    const controller = new AbortController();
    const outcome = pool.run(controller.signal);
    const running = {
      outcome,
      stop: () => {
        controller.abort();
        return outcome;
      },
    };
    runs.push(running);
    return running;
  }

  beforeEach(() => {
    clock = new FakeClock();
    queue = new WorkQueue<string>({ name: "pool-test", clock });
    handler = new ControlledHandler();
    runs = [];
  });

  afterEach(async () => {
    for (const call of handler.open()) finish(call);
    const stopped = Promise.all(runs.map((r) => r.stop()));
    await clock.advance(30_000); // past any drain timeout
    await stopped;
  });

  it("runs at most `concurrency` items at once and takes the rest as slots free up", async () => {
    const pool = newPool({ concurrency: 3 });
    for (let i = 0; i < 10; i++) queue.add(`k${i}`);
    start(pool);
    await clock.flush();
    assert.equal(handler.running, 3);
    assert.equal(queue.len(), 7, "items not started stay in the queue");
    while (handler.calls.length < 10 || handler.running > 0) {
      const open = handler.open();
      assert.ok(open.length > 0);
      finish(open[0]!);
      await clock.flush();
    }
    assert.equal(handler.maxRunning, 3);
    assert.deepEqual(
      handler.calls.map((c) => c.item),
      Array.from({ length: 10 }, (_, i) => `k${i}`),
    );
    assert.equal(queue.stats().processing, 0);
  });

  it("lets the event loop turn during a backlog of handlers that finish without I/O", async () => {
    // Such handlers free their slots in microtasks; a socket read or a timer must not wait for the whole backlog.
    const items = 1_000;
    for (let i = 0; i < items; i++) queue.add(`k${i}`);
    let finished = 0;
    const pool = new WorkerPool<string>({
      queue,
      clock,
      concurrency: 16,
      handler: async () => {
        await Promise.resolve();
        finished++;
      },
    });
    let finishedAtFirstTurn: number | undefined;
    setImmediate(() => (finishedAtFirstTurn = finished));
    start(pool);
    while (finished < items) await new Promise<void>((resolve) => setImmediate(resolve));
    assert.ok(finishedAtFirstTurn !== undefined, "the event loop turned");
    assert.ok(
      finishedAtFirstTurn < items / 2,
      `the event loop turned only after ${finishedAtFirstTurn} of ${items} items`,
    );
  });

  it("never processes one item twice at once; an add during processing runs it again afterwards", async () => {
    const pool = newPool({ concurrency: 4 });
    start(pool);
    queue.add("a");
    await clock.flush();
    queue.add("a");
    queue.add("a");
    await clock.flush();
    assert.equal(handler.calls.length, 1);
    finish(handler.calls[0]!);
    await clock.flush();
    assert.equal(handler.calls.length, 2, "processed once more, not once per add");
    finish(handler.calls[1]!);
    await clock.flush();
    assert.equal(handler.calls.length, 2);
    assert.equal(handler.overlap, false);
  });

  it("a throw requeues the item with rate limiting, reports it, and the pool keeps going", async () => {
    const errors: WorkItemError<string>[] = [];
    const logger = new CapturingLogger();
    const lines = logger.lines;
    const pool = newPool({ onError: (e) => errors.push(e), logger });
    start(pool);
    queue.add("a");
    await clock.flush();
    fail(handler.calls[0]!, new Error("conflict writing status"));
    await clock.flush();
    assert.equal(errors.length, 1);
    const error = errors[0]!;
    assert.ok(error instanceof WorkItemError);
    assert.equal(error.queue, "pool-test");
    assert.equal(error.item, "a");
    assert.equal(error.verb, "process");
    assert.equal(error.attempt, 0);
    assert.equal((error.cause as Error).message, "conflict writing status");
    assert.match(error.message, /pool-test.*process a.*conflict writing status/);
    assert.ok(
      lines.some(
        (l) => l.level === "error" && l.fields?.["item"] === "a" && l.fields?.["queue"] === "pool-test",
      ),
    );
    assert.equal(queue.numRequeues("a"), 1);

    queue.add("b");
    await clock.flush();
    assert.equal(handler.calls[1]?.item, "b", "the pool survived");
    finish(handler.calls[1]);
    await clock.advance(5);
    assert.equal(handler.calls[2]?.item, "a", "retried after the 5 ms backoff");
    assert.equal(handler.calls[2]?.context.attempt, 1);
    finish(handler.calls[2]);
    await clock.flush();
    assert.equal(queue.numRequeues("a"), 0, "forgotten after success");
  });

  it("treats a synchronous throw and a rejected promise alike", async () => {
    const seen: string[] = [];
    let attempts = 0;
    const pool = new WorkerPool<string>({
      queue,
      clock,
      handler: (item) => {
        seen.push(item);
        attempts++;
        if (attempts === 1) throw new Error("sync");
        if (attempts === 2) return Promise.reject(new Error("async"));
        return undefined;
      },
    });
    start(pool);
    queue.add("a");
    await clock.advance(5);
    await clock.advance(10);
    assert.deepEqual(seen, ["a", "a", "a"]);
    assert.equal(queue.numRequeues("a"), 0);
  });

  it("requeueAfterMs brings the item back after that delay and forgets its failures", async () => {
    const pool = newPool();
    start(pool);
    queue.addRateLimited("a");
    await clock.advance(5);
    assert.equal(handler.calls.length, 1);
    finish(handler.calls[0]!, { requeueAfterMs: 30_000 });
    await clock.flush();
    assert.equal(queue.numRequeues("a"), 0);
    await clock.advance(30_000); // 30.005 s: ready, its one-second bucket ends at 31 s
    assert.equal(handler.calls.length, 1);
    await clock.advance(995);
    assert.equal(handler.calls.length, 2);
  });

  it("a throw (what requeue: true used to ask) brings the item back with rate limiting", async () => {
    const pool = newPool();
    start(pool);
    queue.add("a");
    await clock.flush();
    fail(handler.calls[0]!, new Error("not ready yet"));
    await clock.flush();
    assert.equal(queue.numRequeues("a"), 1);
    await clock.advance(5);
    assert.equal(handler.calls.length, 2);
  });

  it("a per-item timeout aborts the handler's signal, frees the slot, and requeues only once the handler returns", async () => {
    const errors: WorkItemError<string>[] = [];
    const pool = newPool({ concurrency: 1, timeoutMs: 1_000, onError: (e) => errors.push(e) });
    start(pool);
    queue.add("slow");
    queue.add("next");
    await clock.flush();
    const slow = handler.calls[0]!;
    assert.equal(slow.item, "slow");
    await clock.advance(999);
    assert.equal(slow.context.signal.aborted, false);
    await clock.advance(1);
    assert.equal(slow.context.signal.aborted, true);
    assert.ok(slow.context.signal.reason instanceof WorkItemTimeoutError);
    assert.equal(handler.calls[1]?.item, "next", "the slot went to the next item");

    queue.add("slow");
    await clock.flush();
    assert.equal(
      handler.calls.filter((c) => c.item === "slow").length,
      1,
      "still processing: not handed out again while its handler runs",
    );
    finish(slow); // returns late, with success: still a failure
    await clock.flush();
    assert.equal(errors.length, 1);
    assert.ok(errors[0]!.cause instanceof WorkItemTimeoutError);
    assert.equal(queue.numRequeues("slow"), 1);
    finish(handler.calls[1]);
    await clock.flush();
    assert.equal(handler.calls[2]?.item, "slow", "the add made during the overrun");
    assert.equal(handler.overlap, false);
  });

  it("a slot freed by a timeout is freed once: the overrunning handler's return starts nothing more", async () => {
    const pool = newPool({ concurrency: 1, timeoutMs: 1_000 });
    start(pool);
    queue.add("slow");
    queue.add("b");
    queue.add("c");
    await clock.flush();
    await clock.advance(1_000); // "slow" times out: its slot goes to "b"
    assert.deepEqual(
      handler.open().map((c) => c.item),
      ["slow", "b"],
    );
    finish(handler.calls[0]!); // "slow" returns while "b" holds the only slot
    await clock.flush();
    assert.deepEqual(
      handler.open().map((c) => c.item),
      ["b"],
      "c waits for b: the overrun's return gave back no second slot",
    );
    finish(handler.calls[1]!);
    await clock.flush();
    assert.equal(handler.calls[2]?.item, "c");
    assert.equal(pool.inFlight, 1);
  });

  it("a handler that finishes in time is not aborted", async () => {
    const pool = newPool({ timeoutMs: 1_000 });
    start(pool);
    queue.add("a");
    await clock.flush();
    await clock.advance(500);
    finish(handler.calls[0]!);
    await clock.advance(2_000);
    assert.equal(handler.calls[0]!.context.signal.aborted, false);
    assert.equal(queue.numRequeues("a"), 0);
    assert.equal(clock.pendingTimers, 0);
  });

  it("stop waits for the items in flight, leaves the rest unprocessed and closes the queue", async () => {
    const pool = newPool({ concurrency: 2, drainTimeoutMs: 10_000 });
    for (const key of ["a", "b", "c"]) queue.add(key);
    const running = start(pool);
    await clock.flush();
    const stopped = running.stop();
    let outcome: { drained: boolean; abandoned: string[] } | undefined;
    void stopped.then((r) => (outcome = r));
    await clock.advance(1_000);
    assert.equal(outcome, undefined, "waits for a and b");
    assert.equal(pool.inFlight, 2);
    finish(handler.calls[0]!);
    finish(handler.calls[1]!);
    await clock.flush();
    assert.deepEqual(outcome, { drained: true, abandoned: [] });
    assert.deepEqual(
      handler.calls.map((c) => c.item),
      ["a", "b"],
      "c was never started",
    );
    assert.equal(queue.closed, true);
    queue.add("d");
    assert.equal(queue.stats().droppedAfterClose, 1);
    assert.equal(await running.stop(), outcome, "a second stop returns the same outcome");
  });

  it("at the drain timeout aborts the handlers still running and reports them abandoned", async () => {
    const logger = new CapturingLogger();
    const lines = logger.lines;
    const pool = newPool({ concurrency: 2, drainTimeoutMs: 5_000, logger });
    queue.add("stuck");
    const running = start(pool);
    await clock.flush();
    const stopped = running.stop();
    await clock.advance(5_000);
    const outcome = await stopped;
    assert.deepEqual(outcome, { drained: false, abandoned: ["stuck"] });
    const signal = handler.calls[0]!.context.signal;
    assert.ok(signal.aborted && signal.reason instanceof WorkerPoolStoppedError);
    assert.ok(lines.some((l) => l.level === "warn" && /deadline/.test(l.message)));
    finish(handler.calls[0]!);
    await clock.flush();
    assert.equal(queue.stats().processing, 0, "marked done when it finally returns");
  });

  it("abortInFlight: the handlers in flight are aborted at once, not after the drain timeout", async () => {
    const pool = newPool({ concurrency: 2, drainTimeoutMs: 30_000 });
    queue.add("a");
    queue.add("b");
    const stop = new AbortController();
    const lost = new AbortController();
    const outcome = pool.run(stop.signal, { abortInFlight: lost.signal });
    runs.push({ outcome, stop: () => (stop.abort(), outcome) });
    await clock.flush();
    assert.equal(handler.calls.length, 2);
    lost.abort(new Error("leadership lost"));
    await clock.flush();
    for (const call of handler.calls) {
      assert.ok(call.context.signal.aborted, `${call.item} aborted without waiting for the drain`);
      assert.equal((call.context.signal.reason as Error).message, "leadership lost");
    }
    queue.add("c");
    for (const call of handler.open()) finish(call);
    assert.deepEqual(await outcome, { drained: true, abandoned: [] }, "they returned: drained");
    assert.equal(handler.calls.length, 2, "nothing taken after the loss");
  });

  it("abortInFlight during a drain: a stop that was waiting aborts the handlers when it fires", async () => {
    const pool = newPool({ drainTimeoutMs: 30_000 });
    queue.add("a");
    const stop = new AbortController();
    const lost = new AbortController();
    const outcome = pool.run(stop.signal, { abortInFlight: lost.signal });
    runs.push({ outcome, stop: () => (stop.abort(), outcome) });
    await clock.flush();
    stop.abort();
    await clock.advance(1_000);
    assert.equal(handler.calls[0]!.context.signal.aborted, false, "draining: the handler may finish");
    lost.abort(new Error("leadership lost"));
    await clock.flush();
    assert.ok(handler.calls[0]!.context.signal.aborted);
    finish(handler.calls[0]!);
    assert.deepEqual(await outcome, { drained: true, abandoned: [] });
  });

  it("a handler that reads its signal only after the drain timeout sees it aborted", async () => {
    let release: () => void = () => {};
    let seen: AbortSignal | undefined;
    const pool = new WorkerPool<string>({
      queue,
      clock,
      drainTimeoutMs: 100,
      handler: async (_item, context) => {
        await new Promise<void>((resolve) => (release = resolve));
        seen = context.signal;
      },
    });
    queue.add("a");
    const running = start(pool);
    await clock.flush();
    const stopped = running.stop();
    await clock.advance(100);
    assert.deepEqual(await stopped, { drained: false, abandoned: ["a"] });
    release();
    await clock.flush();
    assert.ok(seen?.aborted && seen.reason instanceof WorkerPoolStoppedError);
  });

  it("a throwing onError does not kill the pool", async () => {
    const pool = newPool({
      onError: () => {
        throw new Error("bad callback");
      },
    });
    start(pool);
    queue.add("a");
    await clock.flush();
    fail(handler.calls[0]!, new Error("boom"));
    await clock.flush();
    queue.add("b");
    await clock.flush();
    assert.equal(handler.calls[1]?.item, "b");
  });

  it("a run whose signal already aborted closes the queue; a run after stop rejects", async () => {
    const pool = newPool();
    assert.deepEqual(await pool.run(AbortSignal.abort()), { drained: true, abandoned: [] });
    assert.equal(queue.closed, true);
    await assert.rejects(pool.run(new AbortController().signal), /start after stop/);
  });

  it("a run whose signal already aborted takes no item, not even one that is ready", async () => {
    const pool = newPool();
    queue.add("a");
    assert.deepEqual(await pool.run(AbortSignal.abort()), { drained: true, abandoned: [] });
    await clock.flush();
    assert.equal(handler.calls.length, 0);
    assert.equal(queue.len(), 1, "left in the closed queue");
  });

  it("a second run while running rejects, and the first run carries on", async () => {
    const pool = newPool();
    const running = start(pool);
    await assert.rejects(pool.run(new AbortController().signal), /already running/);
    queue.add("a");
    await clock.flush();
    assert.equal(handler.calls.length, 1);
    finish(handler.calls[0]!);
    assert.deepEqual(await running.stop(), { drained: true, abandoned: [] });
  });

  it("waits 30 s for the items in flight by default", async () => {
    const pool = newPool();
    queue.add("slow");
    const running = start(pool);
    await clock.flush();
    let outcome: WorkerPoolOutcome<string> | undefined;
    void running.stop().then((r) => (outcome = r));
    await clock.advance(29_999);
    assert.equal(outcome, undefined);
    await clock.advance(1);
    assert.deepEqual(outcome, { drained: false, abandoned: ["slow"] });
  });

  it("rejects a concurrency below one and a non-positive timeout", () => {
    assert.throws(() => new WorkerPool({ queue, handler: handler.handle, concurrency: 0 }), RangeError);
    assert.throws(() => new WorkerPool({ queue, handler: handler.handle, timeoutMs: 0 }), RangeError);
  });

  it("rejects a negative or NaN drain timeout", () => {
    assert.throws(() => new WorkerPool({ queue, handler: handler.handle, drainTimeoutMs: -1 }), RangeError);
    assert.throws(() => new WorkerPool({ queue, handler: handler.handle, drainTimeoutMs: NaN }), RangeError);
  });
});
