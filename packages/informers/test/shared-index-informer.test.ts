import { strict as assert } from "node:assert";
import { FakeClock } from "@tessera/core/testing";
import { DeletedFinalStateUnknown, IndexerError, metaNamespaceKey } from "@tessera/reflector";
import {
  indexByLabel,
  InformerStateError,
  ResyncScheduler,
  stripManagedFields,
  type ResyncTick,
} from "../src/index.js";
import { InformerHarness, settle, widget, type Widget } from "./informer-harness.js";
import { ReplicaHandler, versions } from "./replica.js";
import { seededRandom } from "./seeded-random.js";

// Every case runs on both caches: objects kept as they are, and kept compact (as JSON text).
describe("SharedIndexInformer", () => informerCases(false));
describe("SharedIndexInformer (compact cache)", () => informerCases(true));

function informerCases(compact: boolean): void {
  const harness = (options: ConstructorParameters<typeof InformerHarness>[0] = {}) =>
    new InformerHarness({ ...options, ...(compact ? { compact: true } : {}) });
  let h: InformerHarness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it("keeps the cache and every handler's replica equal to the collection through random changes", async () => {
    h = harness();
    const random = seededRandom(42);
    for (let i = 0; i < 50; i++) h.lw.put(widget(`w-${i}`, i % 2 ? "a" : "b", i));
    const quick = new ReplicaHandler<Widget>();
    const slow = new ReplicaHandler<Widget>();
    const quickReg = h.informer.addEventHandler(quick, { name: "quick" });
    const slowReg = h.informer.addEventHandler(
      {
        onAdd: async (obj, initial) => {
          await Promise.resolve();
          slow.onAdd(obj);
          void initial;
        },
        onUpdate: async (o, n) => {
          await new Promise<void>((resolve) => setImmediate(resolve));
          slow.onUpdate(o, n);
        },
        onDelete: async (obj) => {
          await Promise.resolve();
          slow.onDelete(obj);
        },
      },
      { name: "slow" },
    );
    await h.start();
    for (let op = 0; op < 2_000; op++) {
      const name = `w-${Math.floor(random() * 80)}`;
      const ns = random() < 0.5 ? "a" : "b";
      const key = `${ns}/${name}`;
      const roll = random();
      if (roll < 0.2) h.lw.delete(key);
      else h.lw.put(widget(name, ns, Math.floor(random() * 1000)));
      if (op % 100 === 0) await settle(undefined, 3);
    }
    await settle(() => quickReg.pending === 0 && slowReg.pending === 0);
    const expected = h.lw.snapshot();
    assert.deepEqual(versions(h.informer.lister.list()), versions(expected), "cache equals the collection");
    quick.assertEquals(expected, "quick");
    slow.assertEquals(expected, "slow");
    assert.ok(quick.updates > 0 && quick.deletes > 0);
    assert.equal(h.lw.watches, 1, "one watch for both handlers");
  });

  it("never lets a blocked handler delay another, and the blocked one catches up in order", async () => {
    h = harness();
    await h.start();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const blockedSeen: string[] = [];
    const blocked = h.informer.addEventHandler({
      onAdd: async (obj) => {
        await gate;
        blockedSeen.push(obj.metadata.name);
      },
    });
    const free = new ReplicaHandler<Widget>();
    const freeReg = h.informer.addEventHandler(free);
    for (let i = 0; i < 100; i++) h.lw.put(widget(`w-${i}`));
    await settle(() => free.adds === 100);
    assert.equal(free.adds, 100, "the free handler got everything while the other is blocked");
    await freeReg.whenIdle();
    assert.equal(blockedSeen.length, 0);
    assert.equal(blocked.pending, 100, "the blocked handler's buffer holds all of it");
    release();
    await blocked.whenIdle();
    assert.deepEqual(
      blockedSeen,
      Array.from({ length: 100 }, (_, i) => `w-${i}`),
    );
  });

  it("hands a late handler the cached objects as initial adds, and it syncs once it has handled them", async () => {
    h = harness();
    for (let i = 0; i < 10; i++) h.lw.put(widget(`w-${i}`));
    const early = new ReplicaHandler<Widget>();
    const earlyReg = h.informer.addEventHandler(early);
    assert.equal(earlyReg.hasSynced(), false, "not before the informer synced");
    await h.start();
    await earlyReg.waitForSync();
    assert.equal(early.adds, 10);

    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const initialFlags: boolean[] = [];
    const late = h.informer.addEventHandler({
      onAdd: async (_obj, isInInitialList) => {
        initialFlags.push(isInInitialList);
        await gate;
      },
    });
    await settle(() => initialFlags.length > 0);
    assert.equal(h.informer.hasSynced(), true);
    assert.equal(late.hasSynced(), false, "not while it still handles its initial list");
    release();
    await late.waitForSync();
    h.lw.put(widget("w-new"));
    await late.whenIdle();
    await settle(() => initialFlags.length === 11);
    assert.deepEqual(initialFlags, [...Array<boolean>(10).fill(true), false]);
  });

  it("delivers a tombstone for a deletion seen only through a relist", async () => {
    h = harness();
    for (let i = 0; i < 5; i++) h.lw.put(widget(`w-${i}`));
    const replica = new ReplicaHandler<Widget>();
    const tombstones: DeletedFinalStateUnknown<Widget>[] = [];
    const reg = h.informer.addEventHandler(replica);
    h.informer.addEventHandler({
      onDelete: (obj) => {
        if (obj instanceof DeletedFinalStateUnknown) tombstones.push(obj);
      },
    });
    await h.start();
    await reg.waitForSync();
    h.lw.delete("default/w-3", { silent: true });
    h.lw.put(widget("w-9"), { silent: true });
    h.lw.expire();
    // The reflector backs off (at most 800 ms x 2 with jitter) before relisting.
    for (let i = 0; i < 20 && tombstones.length === 0; i++) await h.clock.advance(200);
    await settle(() => replica.objects.size === 5 && reg.pending === 0);
    assert.equal(tombstones.length, 1);
    assert.equal(tombstones[0]?.key, "default/w-3");
    assert.equal(tombstones[0]?.obj.metadata.name, "w-3", "the tombstone holds the last state seen");
    replica.assertEquals(h.lw.snapshot());
    assert.equal(replica.updates, 0, "objects unchanged across the relist are not re-delivered");
  });

  it("logs a failing handler and goes on delivering to it and to the others", async () => {
    h = harness();
    await h.start();
    const seen: string[] = [];
    const reg = h.informer.addEventHandler(
      {
        onAdd: (obj) => {
          seen.push(obj.metadata.name);
          if (obj.metadata.name === "bad") throw new Error("boom");
        },
      },
      { name: "fragile" },
    );
    const other = new ReplicaHandler<Widget>();
    h.informer.addEventHandler(other);
    h.lw.put(widget("bad"));
    h.lw.put(widget("good"));
    await settle(() => seen.length === 2 && other.adds === 2);
    await reg.whenIdle();
    assert.deepEqual(seen, ["bad", "good"]);
    assert.equal(other.adds, 2);
    const line = h.logger.lines.find((l) => l.message === "event handler failed");
    assert.ok(line);
    assert.equal(line.fields?.["handler"], "fragile");
    assert.equal(line.fields?.["key"], "default/bad");
    assert.equal(line.fields?.["error"], "boom");
  });

  it("stops delivering to a closed handler; waiting for its sync then answers false", async () => {
    h = harness();
    const seen: string[] = [];
    const reg = h.informer.addEventHandler({ onAdd: (obj) => void seen.push(obj.metadata.name) });
    const synced = reg.waitForSync();
    reg.close();
    assert.equal(await synced, false);
    await h.start();
    h.lw.put(widget("after"));
    await settle(undefined, 20);
    assert.deepEqual(seen, []);
    assert.equal(h.informer.handlerCount, 0);
    reg.close();
  });

  it("caches transformed objects, indexes them by namespace and custom indexes, and lists them", async () => {
    h = harness({
      transform: stripManagedFields,
      indexers: { app: indexByLabel("app") },
    });
    const withFields = (w: Widget): Widget => ({
      ...w,
      metadata: { ...w.metadata, managedFields: [{ manager: "x" }] },
    });
    h.lw.put(withFields(widget("a1", "a", 1, { app: "web" })));
    h.lw.put(withFields(widget("a2", "a", 2, { app: "db" })));
    h.lw.put(withFields(widget("b1", "b", 3, { app: "web" })));
    h.lw.put(withFields(widget("cluster-wide", "", 4)));
    await h.start();
    const l = h.informer.lister;
    assert.equal(l.size, 4);
    assert.equal(l.get("a1", "a")?.spec?.size, 1);
    assert.equal(l.get("cluster-wide")?.spec?.size, 4);
    assert.equal(l.get("a1"), undefined);
    assert.ok(
      l.list().every((o) => o.metadata.managedFields === undefined),
      "managedFields stripped",
    );
    assert.deepEqual(names(l.namespace("a").list()), ["a1", "a2"]);
    assert.deepEqual(names(l.namespace("").list()), ["cluster-wide"]);
    assert.equal(l.namespace("b").get("b1")?.spec?.size, 3);
    assert.deepEqual(names(l.byIndex("app", "web")), ["a1", "b1"]);
    assert.deepEqual(names(l.list({ app: "web" })), ["a1", "b1"]);
    assert.deepEqual(names(l.namespace("a").list((o) => (o.spec?.size ?? 0) > 1)), ["a2"]);
    assert.deepEqual(l.indexKeys("app", "db"), ["a/a2"]);
    h.informer.addIndexers({ size: (o) => [String(o.spec?.size ?? 0)] });
    assert.deepEqual(names(l.byIndex("size", "3")), ["b1"], "an index added late covers cached objects");
    assert.throws(() => h?.informer.addIndexers({ app: indexByLabel("x") }), IndexerError);
    assert.throws(() => l.byIndex("nope", "x"), IndexerError);
  });

  it("refuses to run twice", async () => {
    h = harness();
    await h.start();
    assert.throws(() => h?.informer.run(new AbortController().signal), InformerStateError);
  });

  it("answers waitForSync false when its signal aborts or the run stops before the sync, and true once synced", async () => {
    h = harness();
    h.lw.put(widget("w-0"));
    const giveUp = new AbortController();
    const abandoned = h.informer.waitForSync(giveUp.signal);
    giveUp.abort();
    assert.equal(await abandoned, false, "the caller's signal aborted");
    const informerWait = h.informer.waitForSync();
    const reg = h.informer.addEventHandler({});
    const handlerWait = reg.waitForSync();
    h.done = h.informer.run(h.controller.signal);
    h.controller.abort(); // before anything was listed
    await h.done;
    assert.equal(h.informer.hasSynced(), false);
    assert.equal(await informerWait, false, "the informer stopped without having synced");
    assert.equal(await handlerWait, false, "so its handler never syncs either");
    assert.equal(await h.informer.waitForSync(), false, "asked after the stop");

    const synced = harness();
    const reg2 = synced.informer.addEventHandler({});
    const waits = Promise.all([synced.informer.waitForSync(), reg2.waitForSync()]);
    await synced.start();
    assert.deepEqual(await waits, [true, true]);
    await synced.stop();
    assert.equal(await synced.informer.waitForSync(), true, "synced stays true once stopped");
  });

  it("keeps its cache once stopped, refuses close while running, and close lets go of handlers and cache", async () => {
    h = harness();
    for (let i = 0; i < 3; i++) h.lw.put(widget(`w-${i}`));
    const seen: string[] = [];
    h.informer.addEventHandler({ onAdd: (obj) => void seen.push(obj.metadata.name) });
    await h.start();
    assert.throws(() => h?.informer.close(), InformerStateError);
    await h.stop();
    assert.equal(h.informer.isStopped, true);
    assert.equal(h.informer.lister.size, 3, "the cache is kept after the run");
    h.informer.close();
    h.informer.close();
    assert.equal(h.informer.lister.size, 0);
    assert.equal(h.informer.handlerCount, 0);
    assert.throws(() => h?.informer.run(new AbortController().signal), InformerStateError);
    assert.deepEqual(seen.sort(), ["w-0", "w-1", "w-2"]);
  });

  it("re-delivers 100,000 cached objects to a handler within one resync period, on one timer", async function () {
    this.timeout(60_000);
    const schedulerClock = new FakeClock();
    const ticks: ResyncTick[] = [];
    const scheduler = new ResyncScheduler({
      clock: schedulerClock,
      random: seededRandom(9),
      onTick: (t) => ticks.push(t),
    });
    h = harness({ resyncScheduler: scheduler });
    for (let i = 0; i < 100_000; i++) h.lw.put(widget(`w-${i}`, `ns-${i % 10}`));
    await h.start();
    const resynced = new Map<string, number[]>();
    const periodMs = 30_000;
    const quiet = new ReplicaHandler<Widget>();
    h.informer.addEventHandler(quiet, { name: "no-resync" });
    const reg = h.informer.addEventHandler(
      {
        onUpdate: (o, n) => {
          if (o === n) {
            const key = metaNamespaceKey(n);
            const times = resynced.get(key);
            if (times) times.push(schedulerClock.now());
            else resynced.set(key, [schedulerClock.now()]);
          }
        },
      },
      { name: "resyncing", resyncPeriodMs: periodMs },
    );
    await reg.waitForSync();
    assert.equal(schedulerClock.pendingTimers, 1);
    for (let t = 0; t < periodMs + 2_500; t += 500) {
      schedulerClock.advanceSync(500);
      assert.ok(schedulerClock.pendingTimers <= 1, "one resync timer at most");
      await reg.whenIdle();
    }
    await reg.whenIdle();
    assert.equal(resynced.size, 100_000, "every object re-delivered");
    for (const [key, times] of resynced) {
      // Due in a bucket of one second, popped by a tick at most 1.25 s later.
      assert.ok((times[0] as number) <= periodMs + 2_250, `${key} first re-delivered at ${times[0]} ms`);
      if (times.length > 1) {
        assert.equal(times.length, 2, `${key} re-delivered ${times.length} times`);
        assert.ok(
          (times[1] as number) - (times[0] as number) >= periodMs - 1_250,
          `${key} re-delivered too soon`,
        );
      }
    }
    const most = Math.max(...ticks.map((t) => t.examined));
    // About 3,300 due per second; a tick 1.25 s after the last can cross two bucket boundaries.
    assert.ok(most < 8_000, `a tick handles only what is due, not ${most} entries`);
    assert.ok(ticks.every((t) => t.buckets <= 2));
    assert.equal(quiet.resyncs, 0, "a handler without a period is not resynced");
  });
}

function names(objects: Widget[]): string[] {
  return objects.map((o) => o.metadata.name).sort();
}
