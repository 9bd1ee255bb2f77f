// A reconciler's onError (kube-rs's error_policy) and the controller's failure
// logging, on a fake clock and a capturing logger.
import { strict as assert } from "node:assert";
import { CapturingLogger, FakeClock } from "@tessera/core/testing";
import { SharedIndexInformer } from "@tessera/informers";
import { ApiError, TransportError, type KubeObject } from "@tessera/client";
import { InMemoryListerWatcher } from "@tessera/reflector/testing";
import { Controller } from "../src/controller.js";
import { enqueueForObject, ErrorResult, type Reconciler, type Request } from "../src/index.js";

function widget(name: string): KubeObject {
  return { apiVersion: "example.com/v1", kind: "Widget", metadata: { name, namespace: "ns", generation: 1 } };
}

/** Lets pending promise chains and immediate callbacks run. */
async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

class QuotaExceeded extends Error {
  override readonly name = "QuotaExceeded";
}
class SpecInvalid extends Error {
  override readonly name = "SpecInvalid";
}

const unavailable = () =>
  new ApiError(
    { verb: "get", resource: "widgets.example.com", namespace: "ns", name: "a" },
    503,
    "ServiceUnavailable",
    "the server is currently unable to handle the request",
  );

describe("Controller: onError and failure logging", () => {
  const stops: AbortController[] = [];
  afterEach(() => {
    for (const s of stops.splice(0)) s.abort();
  });

  function harness(
    clock: FakeClock,
    reconciler: Reconciler<KubeObject>,
    logger = new CapturingLogger(),
    maxBackoffMs?: number,
  ) {
    const lw = new InMemoryListerWatcher<KubeObject>({ resource: "widgets.example.com" });
    const informer = new SharedIndexInformer<KubeObject>({ listerWatcher: lw, clock });
    const controller = new Controller<KubeObject>({
      name: "errors",
      clock,
      logger,
      primary: informer,
      sources: [{ informer, toRequests: enqueueForObject(), predicates: [] }],
      reconciler,
      ...(maxBackoffMs ? { maxBackoffMs } : {}),
    });
    const stop = new AbortController();
    stops.push(stop);
    controller.watch();
    void informer.run(stop.signal);
    void controller.work(stop.signal);
    return { lw, controller, logger };
  }

  it("requeues a recognised error after the delay onError chose, and gives up on another", async () => {
    const clock = new FakeClock();
    const calls: Array<{ name: string; at: number; attempt: number }> = [];
    const seenByPolicy: Array<string | undefined> = [];
    const h = harness(clock, {
      reconcile: (request: Request, ctx) => {
        calls.push({ name: request.name, at: clock.now(), attempt: ctx.attempt });
        if (request.name === "quota") throw new QuotaExceeded("quota exceeded, resets in 30 s");
        throw new SpecInvalid("spec.size must be S, M or L");
      },
      onError: (error, object) => {
        seenByPolicy.push(object?.metadata?.name);
        if (error instanceof QuotaExceeded) return ErrorResult.requeueAfter(30_000);
        if (error instanceof SpecInvalid) return ErrorResult.terminal;
        return undefined;
      },
    });
    h.lw.put(widget("quota"));
    h.lw.put(widget("invalid"));
    await settle();
    await clock.advance(10);
    await settle();
    const at = (name: string) => calls.filter((c) => c.name === name).map((c) => c.at);
    assert.deepEqual(at("quota"), [0]);
    assert.deepEqual(at("invalid"), [0]);
    // Not the rate limiter's 5 ms: nothing until the chosen 30 s.
    await clock.advance(29_000);
    await settle();
    assert.deepEqual(at("quota"), [0], "not retried before its delay");
    await clock.advance(1_100);
    await settle();
    assert.equal(at("quota").length, 2, "retried once the 30 s passed");
    assert.ok(at("quota")[1]! >= 30_000 && at("quota")[1]! <= 30_200, `retried at ${at("quota")[1]} ms`);
    await clock.advance(30_100);
    await settle();
    assert.equal(at("quota").length, 3, "and again 30 s later");
    assert.deepEqual(at("invalid"), [0], "the terminal one is not retried");
    assert.equal(h.controller.queue.numRequeues("ns/invalid"), 0, "its backoff forgotten");
    assert.ok(seenByPolicy.includes("quota") && seenByPolicy.includes("invalid"), "onError saw the object");
    const terminal = h.logger.matching(/terminal/, "error");
    assert.equal(terminal.length, 1, "the terminal failure logged once");
    assert.equal(terminal[0]!.fields["name"], "invalid");
    // A new event brings the terminal one back.
    h.lw.put({ ...widget("invalid"), metadata: { ...widget("invalid").metadata, generation: 2 } });
    await settle();
    await clock.advance(10);
    await settle();
    assert.equal(at("invalid").length, 2);
  });

  it("an onError that returns nothing, or throws, leaves the error to the rate limiter's backoff", async () => {
    const clock = new FakeClock();
    const attempts: number[] = [];
    let policyCalls = 0;
    const h = harness(clock, {
      reconcile: (_request, ctx) => {
        attempts.push(ctx.attempt);
        if (attempts.length < 4) throw new Error("flaky");
      },
      onError: () => {
        policyCalls++;
        if (policyCalls === 2) throw new Error("the policy itself broke");
        return undefined;
      },
    });
    h.lw.put(widget("a"));
    await settle();
    for (let i = 0; i < 10; i++) {
      await clock.advance(20);
      await settle(3);
    }
    assert.deepEqual(attempts, [1, 2, 3, 4], "5, 10, 20 ms backoff: every retry counted");
    assert.equal(policyCalls, 3);
    assert.equal(h.logger.matching(/onError threw/, "error").length, 1);
  });

  it("an API server down for 8 s under 20 objects: one error line per object, not one per failure", async () => {
    const clock = new FakeClock();
    let down = true;
    let failures = 0;
    const h = harness(clock, {
      reconcile: (request) => {
        if (!down) return;
        failures++;
        throw new TransportError(
          { verb: "get", resource: "configmaps", namespace: "ns", name: request.name },
          0,
          "TransportError",
          "connect ECONNREFUSED 127.0.0.1:6443",
        );
      },
    });
    for (let i = 0; i < 20; i++) h.lw.put(widget(`w${i}`));
    await settle();
    for (let t = 0; t < 8_000; t += 100) {
      await clock.advance(100);
      await settle(3);
    }
    down = false;
    // Each object comes back when its backoff (5 ms doubling) ends: within 20 s here.
    for (let t = 0; t < 20_000; t += 100) {
      await clock.advance(100);
      await settle(3);
    }
    const levels = (level: string) => h.logger.lines.filter((l) => l.level === level).length;
    console.log(
      `      ${failures} failed reconciles: ${levels("error")} error lines, ${levels("debug")} at debug, ${h.logger.matching(/succeeded after failing/, "info").length} recoveries at info`,
    );
    assert.ok(failures >= 200, `${failures} failures in 8 s`);
    assert.equal(levels("error"), 20, "one error line per object");
    assert.equal(h.logger.matching(/succeeded after failing/, "info").length, 20);
    assert.ok(
      h.logger.lines.every((l) => l.fields["cause"] === undefined),
      "no stack for a transport error",
    );
  });

  it("logs N failures of one key as one error line with its cause and counted repeats at debug, one attempt count", async () => {
    const clock = new FakeClock();
    let failing = true;
    const h = harness(
      clock,
      {
        reconcile: (request) => {
          if (!failing) return;
          if (request.name === "bug")
            throw new TypeError("cannot read properties of undefined (reading 'size')");
          throw unavailable();
        },
      },
      new CapturingLogger(),
      1_000,
    );
    h.lw.put(widget("a"));
    h.lw.put(widget("bug"));
    await settle();
    // 5 ms doubling, capped at 1 s by maxBackoffMs: about 14 failures of each key in 8 s.
    for (let i = 0; i < 80; i++) {
      await clock.advance(100);
      await settle(3);
    }
    const failures = (name: string, level: "error" | "debug") =>
      h.logger.lines.filter(
        (l) => l.level === level && l.fields["name"] === name && /reconcile failed/.test(l.message),
      );
    const errors = failures("a", "error");
    assert.equal(errors.length, 1, "one error line for the key");
    const repeats = failures("a", "debug");
    assert.ok(repeats.length >= 10, `${repeats.length} repeats at debug`);
    assert.deepEqual(
      repeats.map((l) => l.fields["repeats"]),
      repeats.map((_, i) => i + 1),
      "each repeat counted",
    );
    assert.match(
      String(errors[0]!.fields["error"]),
      /get widgets\.example\.com ns\/a: 503 ServiceUnavailable/,
    );
    assert.equal(errors[0]!.fields["cause"], undefined, "no error object (so no stack) for an API error");
    assert.equal(errors[0]!.fields["attempt"], 1);
    assert.deepEqual(
      repeats.slice(0, 3).map((l) => l.fields["attempt"]),
      [2, 3, 4],
      "attempt counted from 1, in one field",
    );
    for (const line of h.logger.lines)
      assert.doesNotMatch(line.message, /attempt/, "no second count in the text");
    // Capped at 1 s: the last retries are a second apart, not 1000 s.
    assert.ok(repeats.length >= 12, `${repeats.length} retries in 8 s with a 1 s cap`);
    const bug = failures("bug", "error");
    assert.equal(bug.length, 1);
    const cause = bug[0]!.fields["cause"];
    assert.ok(
      cause instanceof TypeError,
      "a bug is logged with the error, which the JSON logger writes with its stack",
    );
    assert.match(String(cause.stack), /TypeError: cannot read properties/);
    assert.equal(h.logger.lines.filter((l) => l.level === "error").length, 2, "two error lines in all");

    failing = false;
    await clock.advance(1_100);
    await settle();
    const recovered = h.logger.matching(/succeeded after failing/, "info");
    assert.deepEqual(recovered.map((l) => l.fields["name"]).sort(), ["a", "bug"]);
    assert.ok(Number(recovered[0]!.fields["failures"]) >= 12);
  });
});
