import { strict as assert } from "node:assert";
import { FakeClock } from "@tessera/core/testing";
import { IndexedStore, Reflector, type ReflectorOptions } from "../src/index.js";
import { added, cm, endBookmark, list, type TestObject } from "./support/objects.js";
import { ScriptedListerWatcher } from "../src/testing/index.js";

interface Setup {
  clock: FakeClock;
  lw: ScriptedListerWatcher<TestObject>;
  store: IndexedStore<TestObject>;
  reflector: Reflector<TestObject>;
}

function setup(options: Partial<ReflectorOptions<TestObject>> = {}): Setup {
  const clock = new FakeClock();
  const lw = new ScriptedListerWatcher<TestObject>();
  const store = new IndexedStore<TestObject>();
  const reflector = new Reflector<TestObject>({
    listerWatcher: lw,
    store,
    clock,
    random: () => 0.5,
    ...options,
  });
  return { clock, lw, store, reflector };
}

/** Whether `promise` has settled once pending promise chains ran, and with what. */
async function peek<T>(clock: FakeClock, promise: Promise<T>): Promise<{ settled: boolean; value?: T }> {
  let state: { settled: boolean; value?: T } = { settled: false };
  void promise.then((value) => (state = { settled: true, value }));
  await clock.flush();
  return state;
}

describe("Reflector.waitForSync (scripted ListerWatcher, fake clock)", () => {
  it("resolves true once the watch-list snapshot is stored, not before", async () => {
    const s = setup();
    const stop = new AbortController();
    const done = s.reflector.run(stop.signal);
    const synced = s.reflector.waitForSync();
    const w = await s.lw.nextWatch();
    w.emit(added(cm("a", "3")));
    assert.equal((await peek(s.clock, synced)).settled, false, "pending before the end bookmark");
    w.emit(endBookmark("10"));
    assert.equal(await synced, true);
    assert.equal(s.store.size, 1, "the store holds the snapshot when the wait resolves");
    stop.abort();
    await done;
  });

  it("resolves true after a LIST sync, and at once when already synced, also after the run ended", async () => {
    const s = setup({ watchList: false });
    const stop = new AbortController();
    const done = s.reflector.run(stop.signal);
    const synced = s.reflector.waitForSync();
    (await s.lw.nextList()).respond(list("7", [cm("a", "3"), cm("b", "5")]));
    assert.equal(await synced, true);
    assert.equal(await s.reflector.waitForSync(), true);
    stop.abort();
    await done;
    assert.equal(await s.reflector.waitForSync(), true, "synced stays synced");
  });

  it("resolves true at once given resumeFrom, before any run", async () => {
    const s = setup({ resumeFrom: "42" });
    assert.equal(await s.reflector.waitForSync(), true);
  });

  it("resolves false when its signal aborts, while the reflector goes on and syncs", async () => {
    const s = setup();
    const stop = new AbortController();
    const done = s.reflector.run(stop.signal);
    const waiter = new AbortController();
    const gaveUp = s.reflector.waitForSync(waiter.signal);
    const w = await s.lw.nextWatch();
    waiter.abort();
    assert.equal(await gaveUp, false);
    assert.equal(
      await s.reflector.waitForSync(AbortSignal.abort()),
      false,
      "an aborted signal: false at once",
    );
    w.emit(endBookmark("10"));
    assert.equal(await s.reflector.waitForSync(waiter.signal), true, "synced wins over an aborted signal");
    stop.abort();
    await done;
  });

  it("resolves false when the run ends before the sync, and at once once it has ended", async () => {
    const s = setup();
    const stop = new AbortController();
    const done = s.reflector.run(stop.signal);
    const synced = s.reflector.waitForSync();
    await s.lw.nextWatch();
    stop.abort();
    assert.equal(await synced, false);
    await done;
    assert.equal(await s.reflector.waitForSync(), false, "nothing runs: nothing to wait for");
  });

  it("waits for the run when called before it, and for the next run after one ended", async () => {
    const s = setup({ watchList: false });
    const early = s.reflector.waitForSync();
    assert.equal((await peek(s.clock, early)).settled, false, "pending until a run syncs");
    const first = new AbortController();
    const firstDone = s.reflector.run(first.signal);
    await s.lw.nextList();
    first.abort();
    await firstDone;
    assert.equal(await early, false, "the run ended unsynced");
    const second = new AbortController();
    const secondDone = s.reflector.run(second.signal);
    const later = s.reflector.waitForSync();
    (await s.lw.nextList()).respond(list("7", []));
    assert.equal(await later, true);
    second.abort();
    await secondDone;
  });

  it("never rejects when the run rejects: the wait had resolved true at the sync", async () => {
    const s = setup({ consistencyCheck: true });
    const stop = new AbortController();
    const done = s.reflector.run(stop.signal);
    const synced = s.reflector.waitForSync();
    const w = await s.lw.nextWatch();
    w.emit(added(cm("a", "3")), endBookmark("10"));
    assert.equal(await synced, true);
    (await s.lw.nextList()).respond(list("10", [cm("a", "4")]));
    await assert.rejects(done, { name: "WatchListInconsistencyError" });
    assert.equal(await s.reflector.waitForSync(), true);
  });
});
