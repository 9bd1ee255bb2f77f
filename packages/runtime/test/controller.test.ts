import { strict as assert } from "node:assert";
import { FakeClock } from "@tessera/core/testing";
import { SharedIndexInformer } from "@tessera/informers";
import type { KubeObject } from "@tessera/client";
import { InMemoryListerWatcher } from "@tessera/reflector/testing";
import { Controller, requestKey } from "../src/controller.js";
import { enqueueForObject, requestOf, TerminalError, type Request } from "../src/index.js";
import { generationChanged } from "../src/predicates.js";

function widget(name: string, generation = 1, labels: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: "example.com/v1",
    kind: "Widget",
    metadata: { name, namespace: "ns", generation, labels },
  };
}

/** Lets pending promise chains and immediate callbacks run. */
async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

describe("Controller", () => {
  const stops: AbortController[] = [];
  afterEach(() => {
    for (const s of stops.splice(0)) s.abort();
  });

  function harness(clock: FakeClock, reconcile: (req: Request) => unknown, name: string) {
    const lw = new InMemoryListerWatcher<KubeObject>({ resource: "widgets.example.com" });
    const informer = new SharedIndexInformer<KubeObject>({ listerWatcher: lw, clock });
    const controller = new Controller<KubeObject>({
      name,
      clock,
      primary: informer,
      sources: [{ informer, toRequests: enqueueForObject(), predicates: [generationChanged()] }],
      reconciler: { reconcile: async (req) => void (await reconcile(req)) },
    });
    const stop = new AbortController();
    stops.push(stop);
    controller.watch();
    const running = Promise.all([informer.run(stop.signal), controller.work(stop.signal)]);
    return { lw, informer, controller, stop, running };
  }

  it("backs a failing reconcile off exponentially while another controller keeps working", async () => {
    const clock = new FakeClock();
    const attempts: number[] = [];
    const failing = harness(
      clock,
      () => {
        attempts.push(clock.now());
        throw new Error("boom");
      },
      "failing",
    );
    const served: string[] = [];
    const healthy = harness(clock, (req) => void served.push(req.name), "healthy");
    failing.lw.put(widget("bad"));
    await settle();
    // 5 ms, then doubling: advance well past ten retries.
    for (let i = 0; i < 200 && attempts.length < 11; i++) {
      await clock.advance(50);
      if (i % 20 === 0) healthy.lw.put(widget(`w${i}`));
      await settle(3);
    }
    assert.ok(attempts.length >= 11, `retried ${attempts.length} times`);
    const intervals = attempts.slice(1).map((t, i) => t - attempts[i]!);
    // 5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560 ms (the queue rounds delays up to its granularity).
    for (let i = 0; i < 10; i++) {
      const expected = 5 * 2 ** i;
      assert.ok(
        intervals[i]! >= expected && intervals[i]! <= expected * 1.15 + 60,
        `interval ${i} is ${intervals[i]} ms, expected about ${expected} ms (all: ${intervals.join(", ")})`,
      );
    }
    assert.ok(served.length >= 5, `the other controller reconciled ${served.join(", ")}`);
  });

  it("does not requeue a TerminalError, and a generation predicate filters status-only updates", async () => {
    const clock = new FakeClock();
    const calls: string[] = [];
    const h = harness(
      clock,
      (req) => {
        calls.push(req.name);
        if (req.name === "terminal") throw new TerminalError("spec is invalid");
      },
      "terminal",
    );
    h.lw.put(widget("terminal"));
    h.lw.put(widget("ok"));
    await settle();
    await clock.advance(10_000);
    await settle();
    assert.deepEqual(calls.sort(), ["ok", "terminal"]);
    // Same generation (a status write): filtered. New generation: reconciled.
    h.lw.put({ ...widget("ok"), status: { ready: true } } as KubeObject);
    await settle();
    await clock.advance(100);
    assert.deepEqual(calls.filter((c) => c === "ok").length, 1, "status-only update filtered");
    h.lw.put(widget("ok", 2));
    await settle();
    await clock.advance(100);
    await settle();
    assert.deepEqual(calls.filter((c) => c === "ok").length, 2, "spec change reconciled");
  });

  it("resyncs every object once per period past the predicates, spread over the period (the resync floor)", async () => {
    const clock = new FakeClock();
    const lw = new InMemoryListerWatcher<KubeObject>({ resource: "widgets.example.com" });
    const informer = new SharedIndexInformer<KubeObject>({ listerWatcher: lw, clock });
    const times = new Map<string, number[]>();
    const controller = new Controller<KubeObject>({
      name: "floor",
      clock,
      primary: informer,
      sources: [
        {
          informer,
          toRequests: enqueueForObject(),
          predicates: [generationChanged()],
          resyncPeriodMs: 60_000,
        },
      ],
      reconciler: {
        reconcile: (req) => void times.set(req.name, [...(times.get(req.name) ?? []), clock.now()]),
      },
    });
    const stop = new AbortController();
    stops.push(stop);
    for (let i = 0; i < 200; i++) lw.put(widget(`w${i}`));
    controller.watch(stop.signal);
    void informer.run(stop.signal);
    void controller.work(stop.signal);
    assert.ok(await controller.waitForSync(AbortSignal.timeout(5_000)));
    const start = clock.now();
    for (let s = 0; s < 181; s++) {
      await clock.advance(1_000);
      await settle(3);
    }
    await settle();
    const perSecond = new Array<number>(180).fill(0);
    for (const [name, at] of times) {
      const resyncs = at.slice(1);
      assert.ok(resyncs.length >= 3, `${name} resynced ${resyncs.length} times in three periods`);
      let previous = start;
      for (const t of resyncs) {
        assert.ok(t - previous <= 62_500, `${name}: ${t - previous} ms between reconciles`);
        previous = t;
        const second = Math.floor((t - start) / 1000);
        if (second < 180) perSecond[second] = (perSecond[second] ?? 0) + 1;
      }
    }
    // 200 objects over 60 s is 3.3 a second: no second holds a burst.
    assert.ok(Math.max(...perSecond) <= 15, `resyncs per second: ${perSecond.join(" ")}`);
  });

  it("enqueue, reconcileAll and an async-iterable trigger queue requests; a sharded guard drops the keys it refuses", async () => {
    const clock = new FakeClock();
    const lw = new InMemoryListerWatcher<KubeObject>({ resource: "widgets.example.com" });
    const informer = new SharedIndexInformer<KubeObject>({ listerWatcher: lw, clock });
    const reconciled: string[] = [];
    async function* requests(): AsyncGenerator<Request> {
      await Promise.resolve();
      yield { namespace: "ns", name: "from-trigger" };
      yield { namespace: "ns", name: "refused-trigger" };
    }
    const controller = new Controller<KubeObject>({
      name: "sources",
      clock,
      primary: informer,
      sources: [{ informer, toRequests: enqueueForObject(), predicates: [] }],
      triggers: [{ source: requests(), event: "request" }],
      admit: (key) => !key.includes("refused"),
      reconciler: { reconcile: (req) => void reconciled.push(req.name) },
    });
    const stop = new AbortController();
    stops.push(stop);
    lw.put(widget("a"));
    lw.put(widget("refused-object"));
    controller.watch(stop.signal);
    void informer.run(stop.signal);
    assert.ok(await controller.waitForSync(AbortSignal.timeout(5_000)));
    await settle();
    assert.equal(controller.enqueue({ namespace: "ns", name: "enqueued" }), true);
    assert.equal(controller.enqueue({ namespace: "ns", name: "refused-enqueue" }), false);
    assert.throws(() => controller.enqueue({ name: "" } as Request), /enqueue: a request needs a name/);
    void controller.work(stop.signal);
    await settle();
    await clock.advance(100);
    await settle();
    assert.deepEqual(reconciled.sort(), ["a", "enqueued", "from-trigger"]);
    reconciled.length = 0;
    assert.equal(controller.reconcileAll(), 1, "the refused object is not queued");
    await settle();
    await clock.advance(100);
    await settle();
    assert.deepEqual(reconciled, ["a"]);
  });

  it("passes the cached object to ctx.current() and survives a reconciler that throws a non-Error", async () => {
    const clock = new FakeClock();
    const lw = new InMemoryListerWatcher<KubeObject>({ resource: "widgets.example.com" });
    const informer = new SharedIndexInformer<KubeObject>({ listerWatcher: lw, clock });
    const seen: Array<string | undefined> = [];
    let threw = false;
    const controller = new Controller<KubeObject>({
      name: "current",
      clock,
      primary: informer,
      sources: [{ informer, toRequests: enqueueForObject(), predicates: [] }],
      reconciler: {
        reconcile: (req, ctx) => {
          if (!threw) {
            threw = true;
            throw "not an error"; // eslint-disable-line @typescript-eslint/only-throw-error
          }
          seen.push(`${requestKey(req)}:${ctx.current()?.metadata?.name ?? "gone"}:${ctx.attempt}`);
        },
      },
    });
    const stop = new AbortController();
    stops.push(stop);
    controller.watch();
    void informer.run(stop.signal);
    const working = controller.work(stop.signal);
    lw.put(widget("a"));
    await settle();
    await clock.advance(100);
    await settle();
    assert.deepEqual(seen, ["ns/a:a:2"], "retried after the throw, second attempt, object from the cache");
    lw.delete("ns/a");
    await settle();
    await clock.advance(100);
    await settle();
    assert.deepEqual(seen, ["ns/a:a:2", "ns/a:gone:1"]);
    stop.abort();
    assert.deepEqual(await working, { drained: true, abandoned: [] });
  });

  it("counts an initial list as delivered once an async mapper queued its requests, and gives the mapper the reader", async () => {
    const clock = new FakeClock();
    const lw = new InMemoryListerWatcher<KubeObject>({ resource: "widgets.example.com" });
    const informer = new SharedIndexInformer<KubeObject>({ listerWatcher: lw, clock });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const reads: string[] = [];
    const reader = {
      get: () => Promise.resolve(undefined),
      list: <T extends KubeObject>(): Promise<T[]> => {
        reads.push("list");
        return Promise.resolve([widget("found")] as T[]);
      },
    };
    const controller = new Controller<KubeObject>({
      name: "async-map",
      clock,
      primary: informer,
      reader,
      sources: [
        {
          informer,
          toRequests: async (object, { client }) => {
            await gate;
            const found = await client.list({} as never);
            return [requestOf(object), ...found.map(requestOf)];
          },
          predicates: [],
        },
      ],
      reconciler: { reconcile: () => undefined },
    });
    const stop = new AbortController();
    stops.push(stop);
    lw.put(widget("a"));
    controller.watch(stop.signal);
    void informer.run(stop.signal);
    assert.ok(await informer.waitForSync(stop.signal));
    await settle();
    assert.equal(controller.hasSynced(), false, "the initial add is still being mapped");
    assert.equal(controller.queue.len(), 0);
    release();
    assert.ok(await controller.waitForSync(AbortSignal.timeout(5_000)));
    assert.deepEqual(reads, ["list"], "the mapper read through the reader it was given");
    assert.equal(controller.queue.len(), 2, "its own request and the one it found");
  });
});
