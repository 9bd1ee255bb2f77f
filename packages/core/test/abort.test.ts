import { strict as assert } from "node:assert";
import { raceAbort, timeoutScope, TimeoutError, whenAborted } from "../src/index.js";
import { FakeClock } from "../src/testing/index.js";

describe("timeoutScope", () => {
  it("aborts with a TimeoutError naming what timed out when the time runs out on the clock", async () => {
    const clock = new FakeClock();
    const scope = timeoutScope(clock, 2_000, "renew", []);
    await clock.advance(1_999);
    assert.equal(scope.signal.aborted, false);
    await clock.advance(1);
    assert.equal(scope.timedOut, true);
    assert.ok(scope.signal.reason instanceof TimeoutError);
    assert.match(scope.signal.reason.message, /renew timed out after 2000 ms/);
    scope.close();
  });

  it("aborts with a parent's reason, and close() cancels the timer", () => {
    const clock = new FakeClock();
    const parent = new AbortController();
    const scope = timeoutScope(clock, 1_000, "call", [undefined, parent.signal]);
    parent.abort(new Error("shutting down"));
    assert.equal(scope.signal.aborted, true);
    assert.equal(scope.timedOut, false);
    assert.equal((scope.signal.reason as Error).message, "shutting down");
    scope.close();
    assert.equal(clock.pendingTimers, 0);
  });

  it("is aborted from the start when a parent already is, and starts no timer", () => {
    const clock = new FakeClock();
    const scope = timeoutScope(clock, 1_000, "call", [AbortSignal.abort("gone")]);
    assert.equal(scope.signal.aborted, true);
    assert.equal(clock.pendingTimers, 0);
  });
});

describe("whenAborted and raceAbort", () => {
  it("whenAborted resolves once the signal aborts", async () => {
    const controller = new AbortController();
    let done = false;
    const waiting = whenAborted(controller.signal).then(() => (done = true));
    await Promise.resolve();
    assert.equal(done, false);
    controller.abort();
    await waiting;
    assert.equal(done, true);
  });

  it("raceAbort settles with the promise, or rejects with the abort reason first", async () => {
    assert.equal(await raceAbort(Promise.resolve(3), new AbortController().signal), 3);
    const controller = new AbortController();
    const never = new Promise<number>(() => {});
    const raced = raceAbort(never, controller.signal);
    controller.abort(new Error("stop"));
    await assert.rejects(raced, /stop/);
  });
});
