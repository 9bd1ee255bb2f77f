import { strict as assert } from "node:assert";
import { CapturingLogger, FakeClock, TestMetrics } from "@tessera/core/testing";
import {
  ApiStatusError,
  ConnectionError,
  DeltaFIFO,
  IndexedStore,
  Reflector,
  ReflectorRunningError,
  StreamDecodeError,
  WatchListInconsistencyError,
  type ReflectorOptions,
} from "../src/index.js";
import { type Status } from "@tessera/client";
import {
  added,
  bookmark,
  cm,
  deleted,
  endBookmark,
  list,
  modified,
  type TestObject,
} from "./support/objects.js";
import { RecordingStore, StagingRecordingStore } from "./support/recording-store.js";
import { ScriptedListerWatcher } from "../src/testing/index.js";

const ctx = { resource: "configmaps", verb: "watch" as const };
const listCtx = { resource: "configmaps", verb: "list" as const };

function status(code: number, reason: string, message = reason): Status {
  return { kind: "Status", apiVersion: "v1", status: "Failure", code, reason, message };
}
const httpError = (code: number, reason: string, verb: "list" | "watch" = "watch") =>
  new ApiStatusError(verb === "list" ? listCtx : ctx, code, reason, reason, status(code, reason), "response");
const eventError = (code: number, reason: string) =>
  new ApiStatusError(ctx, code, reason, reason, status(code, reason), "event");

interface Harness {
  clock: FakeClock;
  lw: ScriptedListerWatcher<TestObject>;
  store: RecordingStore<TestObject>;
  reflector: Reflector<TestObject>;
  logger: CapturingLogger;
  metrics: TestMetrics;
  errors: unknown[];
  stop: AbortController;
  done: Promise<void>;
}

function start(options: Partial<ReflectorOptions<TestObject>> = {}, random = 0.5): Harness {
  const clock = new FakeClock();
  const lw = new ScriptedListerWatcher<TestObject>();
  const store = new RecordingStore<TestObject>();
  const logger = new CapturingLogger();
  const metrics = new TestMetrics();
  const errors: unknown[] = [];
  const reflector = new Reflector<TestObject>({
    listerWatcher: lw,
    store,
    clock,
    random: () => random,
    logger,
    meter: metrics.meter,
    onError: (err) => errors.push(err),
    ...options,
  });
  const stop = new AbortController();
  const done = reflector.run(stop.signal);
  return { clock, lw, store, reflector, logger, metrics, errors, stop, done };
}

async function finish(h: Harness): Promise<void> {
  h.stop.abort();
  await h.done;
  await h.metrics.close();
}

/** Syncs a harness by LIST (watch-list off) to `items` at `rv` and returns the watch that follows. */
async function syncByList(h: Harness, rv: string, items: TestObject[]) {
  const l = await h.lw.nextList();
  l.respond(list(rv, items));
  return h.lw.nextWatch();
}

describe("Reflector (scripted ListerWatcher, fake clock)", () => {
  describe("watch-list", () => {
    it("sends one watch-list request and delivers nothing before the end bookmark, then replaces atomically", async () => {
      const h = start();
      const w = await h.lw.nextWatch();
      assert.deepEqual(w.options, {
        sendInitialEvents: true,
        allowWatchBookmarks: true,
        resourceVersionMatch: "NotOlderThan",
        resourceVersion: "",
        timeoutSeconds: 450,
      });
      w.emit(added(cm("a", "3")), added(cm("b", "5")), added(cm("c", "4")));
      assert.deepEqual(h.store.writes, [], "nothing is delivered before the snapshot is complete");
      assert.equal(h.reflector.hasSynced(), false);
      assert.equal(h.reflector.lastSyncResourceVersion, "", "initial ADDED events are not resume points");
      w.emit(endBookmark("10"));
      assert.deepEqual(h.store.writes, [{ op: "replace", size: 3, resourceVersion: "10" }]);
      assert.equal(h.reflector.hasSynced(), true);
      assert.equal(h.reflector.lastSyncResourceVersion, "10");
      assert.equal(h.reflector.lastSyncMode, "watch-list");
      assert.equal(h.lw.untaken, 0, "no LIST, no second connection");
      await finish(h);
    });

    it("goes on consuming the same stream after the bookmark, tracking every resourceVersion", async () => {
      const h = start();
      const w = await h.lw.nextWatch();
      w.emit(added(cm("a", "3")), added(cm("b", "5")), endBookmark("10"));
      w.emit(modified(cm("a", "11", { x: "1" })), deleted(cm("b", "12")), added(cm("d", "13")));
      assert.equal(h.reflector.lastSyncResourceVersion, "13");
      w.emit(bookmark("20"));
      assert.equal(h.reflector.lastSyncResourceVersion, "20", "a bookmark moves the resume point");
      assert.deepEqual(
        h.store.inner
          .list()
          .map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`)
          .sort(),
        ["a@11", "d@13"],
      );
      assert.equal(h.lw.untaken, 0);
      await finish(h);
    });

    it("keeps the later copy of an object the initial events send twice", async () => {
      const h = start();
      const w = await h.lw.nextWatch();
      w.emit(added(cm("a", "3")), added(cm("a", "4")), endBookmark("10"));
      assert.equal(h.store.inner.size, 1);
      assert.equal(h.store.inner.getByKey("default/a")?.metadata?.resourceVersion, "4");
      await finish(h);
    });

    it("applies the transform to snapshot and live objects", async () => {
      const h = start({ transform: (o) => ({ ...o, data: { transformed: "yes" } }) });
      const w = await h.lw.nextWatch();
      w.emit(added(cm("a", "3", { big: "x" })), endBookmark("10"), added(cm("b", "11", { big: "y" })));
      for (const obj of h.store.inner.list()) assert.deepEqual(obj.data, { transformed: "yes" });
      await finish(h);
    });

    it("resumes a watch-list stream that ends cleanly with a plain watch from the last resourceVersion", async () => {
      const h = start();
      const w = await h.lw.nextWatch();
      w.emit(added(cm("a", "3")), endBookmark("10"), modified(cm("a", "14")));
      await h.clock.advance(5_000);
      w.end();
      const next = await h.lw.nextWatch();
      assert.deepEqual(next.options, {
        resourceVersion: "14",
        allowWatchBookmarks: true,
        timeoutSeconds: 450,
      });
      assert.equal(h.store.writes.filter((x) => x.op === "replace").length, 1, "no relist");
      await finish(h);
    });

    it("falls back to LIST + WATCH when the server rejects watch-list, logged and counted once, and does not ask again", async () => {
      const h = start();
      const w = await h.lw.nextWatch();
      w.fail(httpError(422, "Invalid"));
      const l = await h.lw.nextList();
      assert.deepEqual(l.options, { resourceVersion: "0", limit: 500 });
      l.respond(list("20", [cm("a", "3"), cm("b", "7")]));
      const watch = await h.lw.nextWatch();
      assert.equal(watch.options.sendInitialEvents, undefined);
      assert.equal(watch.options.resourceVersion, "20");
      assert.equal(h.reflector.lastSyncMode, "list");
      assert.equal(h.reflector.watchListEnabled, false);
      // A later relist (after a 410) does not try watch-list again.
      watch.fail(eventError(410, "Expired"));
      await h.clock.advanceToNext();
      const relist = await h.lw.nextList();
      assert.equal(relist.options.resourceVersion, "", "after a 410 the relist is a consistent read");
      relist.respond(list("30", [cm("a", "3")]));
      await h.lw.nextWatch();
      assert.equal(await h.metrics.sum("tessera_reflector_watchlist_fallbacks_total"), 1);
      assert.equal(
        await h.metrics.sum("tessera_reflector_watchlist_fallbacks_total", { reason: "Invalid" }),
        1,
      );
      assert.equal(h.logger.matching(/watch-list/, "info").length, 1, "the fallback is logged once");
      assert.match(String(h.logger.matching(/watch-list/, "info")[0]?.fields.error), /422 Invalid/);
      await finish(h);
    });

    it("discards a stream that breaks during the initial events and falls back for this attempt only", async () => {
      const h = start();
      const w = await h.lw.nextWatch();
      w.emit(added(cm("a", "3")), added(cm("b", "4")));
      w.fail(new ConnectionError(ctx, "the watch stream broke: ECONNRESET"));
      assert.deepEqual(h.store.writes, [], "no partial snapshot");
      const l = await h.lw.nextList();
      l.respond(list("9", [cm("a", "3"), cm("b", "4"), cm("c", "8")]));
      await h.clock.flush();
      assert.deepEqual(h.store.writes, [{ op: "replace", size: 3, resourceVersion: "9" }]);
      assert.equal(h.reflector.watchListEnabled, true, "a broken connection says nothing about support");
      const watch = await h.lw.nextWatch();
      assert.equal(watch.options.resourceVersion, "9");
      assert.equal(
        await h.metrics.sum("tessera_reflector_watchlist_fallbacks_total", { reason: "ConnectionFailed" }),
        1,
      );
      // The next relist tries watch-list again, from the last resourceVersion.
      watch.fail(eventError(410, "Expired"));
      await h.clock.advanceToNext();
      const again = await h.lw.nextWatch();
      assert.equal(again.options.sendInitialEvents, true);
      assert.equal(again.options.resourceVersion, "", "a 410 drops the resourceVersion");
      await finish(h);
    });

    it('makes the fallback LIST a consistent read (RV "", not "0") when the watch-list was answered 410 or TooLarge', async () => {
      const tooLarge = new ApiStatusError(
        ctx,
        504,
        "Timeout",
        "too large resource version",
        { ...status(504, "Timeout"), details: { causes: [{ reason: "ResourceVersionTooLarge" }] } },
        "response",
      );
      for (const err of [httpError(410, "Gone"), eventError(410, "Expired"), tooLarge]) {
        const h = start();
        const w = await h.lw.nextWatch();
        w.fail(err);
        const l = await h.lw.nextList();
        assert.deepEqual(l.options, { resourceVersion: "", limit: 500 }, `after ${err.reason}`);
        assert.equal(h.reflector.watchListEnabled, true, "a 410 says nothing about watch-list support");
        l.respond(list("20", [cm("a", "3")]));
        assert.equal((await h.lw.nextWatch()).options.resourceVersion, "20");
        await finish(h);
      }
    });

    it("treats a missing end bookmark within the initial-events deadline as unsupported", async () => {
      const h = start({ initialEventsTimeoutMs: 10_000 });
      const w = await h.lw.nextWatch();
      // An old server ignoring sendInitialEvents: synthetic ADDED events, then silence.
      w.emit(added(cm("a", "3")));
      await h.clock.advance(9_999);
      assert.equal(w.closed, false);
      assert.equal(h.lw.untaken, 0);
      await h.clock.advance(1);
      assert.equal(w.aborted, true, "the initial phase is abandoned at the deadline");
      const l = await h.lw.nextList();
      l.respond(list("5", [cm("a", "3")]));
      await h.lw.nextWatch();
      assert.equal(h.reflector.watchListEnabled, false);
      assert.equal(
        await h.metrics.sum("tessera_reflector_watchlist_fallbacks_total", {
          reason: "InitialEventsTimeout",
        }),
        1,
      );
      await finish(h);
    });

    it("restarts the initial-events deadline with every event", async () => {
      const h = start({ initialEventsTimeoutMs: 10_000 });
      const w = await h.lw.nextWatch();
      for (let i = 0; i < 5; i++) {
        await h.clock.advance(8_000);
        w.emit(added(cm(`o${i}`, String(i + 1))));
      }
      assert.equal(w.closed, false, "40 s of steady progress is not a stall");
      w.emit(endBookmark("50"));
      assert.equal(h.reflector.hasSynced(), true);
      await finish(h);
    });

    it("treats a non-ADDED event before the end bookmark as a server that ignored sendInitialEvents", async () => {
      const h = start();
      const w = await h.lw.nextWatch();
      w.emit(added(cm("a", "3")), modified(cm("a", "9")));
      assert.equal(w.closed, true);
      const l = await h.lw.nextList();
      l.respond(list("9", [cm("a", "9")]));
      await h.lw.nextWatch();
      assert.equal(h.reflector.watchListEnabled, false);
      assert.deepEqual(h.store.writes, [{ op: "replace", size: 1, resourceVersion: "9" }]);
      await finish(h);
    });

    it("treats a stream that ends before the end bookmark as a failed watch-list", async () => {
      const h = start();
      const w = await h.lw.nextWatch();
      w.emit(added(cm("a", "3")));
      w.end();
      const l = await h.lw.nextList();
      assert.equal(l.options.resourceVersion, "0");
      l.respond(list("4", [cm("a", "3")]));
      await h.lw.nextWatch();
      assert.equal(
        await h.metrics.sum("tessera_reflector_watchlist_fallbacks_total", { reason: "NoInitialEventsEnd" }),
        1,
      );
      await finish(h);
    });

    it("can be switched off per reflector with watchList: false", async () => {
      for (const options of [{ watchList: false }, { watchList: false, consistencyCheck: true }]) {
        const h = start(options);
        await h.lw.nextList();
        assert.equal(h.reflector.watchListEnabled, false);
        await finish(h);
      }
    });

    it("reads no environment variable: TESSERA_WATCHLIST=false leaves watch-list on", async () => {
      const saved = process.env.TESSERA_WATCHLIST;
      process.env.TESSERA_WATCHLIST = "false";
      try {
        const h = start();
        await h.lw.nextWatch();
        assert.equal(h.reflector.watchListEnabled, true);
        await finish(h);
      } finally {
        if (saved === undefined) delete process.env.TESSERA_WATCHLIST;
        else process.env.TESSERA_WATCHLIST = saved;
      }
    });
  });

  describe("watch-list into a store that stages its replace", () => {
    /** A harness whose store stages replaces, holding `before` already. */
    function startStaging(before: TestObject[] = [], options: Partial<ReflectorOptions<TestObject>> = {}) {
      const store = new StagingRecordingStore<TestObject>();
      for (const obj of before) store.inner.add(obj);
      return { h: start({ store, ...options }), store };
    }
    const names = (store: StagingRecordingStore<TestObject>) =>
      store.inner.list().map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`);

    it("stages each initial object as it arrives and commits at the end bookmark, nothing visible before", async () => {
      const { h, store } = startStaging([cm("old", "1")]);
      const w = await h.lw.nextWatch();
      w.emit(added(cm("a", "3")), added(cm("b", "5")));
      assert.deepEqual(store.writes, [
        { op: "begin" },
        { op: "stage", key: "default/a" },
        { op: "stage", key: "default/b" },
      ]);
      assert.deepEqual(names(store), ["old@1"], "readers see the old content");
      assert.equal(h.reflector.hasSynced(), false);
      assert.equal(h.reflector.lastSyncResourceVersion, "");
      w.emit(added(cm("a", "4")), endBookmark("10"));
      assert.deepEqual(store.writes.slice(3), [
        { op: "stage", key: "default/a" },
        { op: "commit", resourceVersion: "10" },
      ]);
      assert.deepEqual(names(store), ["a@4", "b@5"], "a key sent twice: its first place, its later object");
      assert.equal(h.reflector.hasSynced(), true);
      assert.equal(h.reflector.lastSyncResourceVersion, "10");
      w.emit(modified(cm("b", "11")), added(cm("c", "12")));
      assert.deepEqual(store.writes.slice(5), [
        { op: "update", key: "default/b" },
        { op: "add", key: "default/c" },
      ]);
      assert.equal(h.reflector.lastSyncResourceVersion, "12");
      const synced = h.logger.matching(/store synced/, "info")[0];
      assert.equal(synced?.fields.items, 3, "the log counts the events of the snapshot");
      await finish(h);
    });

    it("aborts the staging when the stream breaks, ends or sends a non-ADDED event before the bookmark", async () => {
      const endings = [
        (w: Awaited<ReturnType<ScriptedListerWatcher<TestObject>["nextWatch"]>>) =>
          w.fail(new ConnectionError(ctx, "the watch stream broke: ECONNRESET")),
        (w: Awaited<ReturnType<ScriptedListerWatcher<TestObject>["nextWatch"]>>) => w.end(),
        (w: Awaited<ReturnType<ScriptedListerWatcher<TestObject>["nextWatch"]>>) =>
          w.emit(modified(cm("a", "9"))),
      ];
      for (const end of endings) {
        const { h, store } = startStaging([cm("old", "1")]);
        const w = await h.lw.nextWatch();
        w.emit(added(cm("a", "3")));
        end(w);
        const l = await h.lw.nextList();
        assert.deepEqual(store.writes, [{ op: "begin" }, { op: "stage", key: "default/a" }, { op: "abort" }]);
        assert.deepEqual(names(store), ["old@1"], "the store is as it was");
        l.respond(list("9", [cm("a", "9"), cm("c", "8")]));
        await h.lw.nextWatch();
        assert.deepEqual(store.writes.slice(3), [{ op: "replace", size: 2, resourceVersion: "9" }]);
        assert.deepEqual(names(store), ["a@9", "c@8"]);
        await finish(h);
      }
    });

    it("aborts the staging when stopped before the bookmark", async () => {
      const { h, store } = startStaging([cm("old", "1")]);
      const w = await h.lw.nextWatch();
      w.emit(added(cm("a", "3")));
      await finish(h);
      assert.deepEqual(store.writes, [{ op: "begin" }, { op: "stage", key: "default/a" }, { op: "abort" }]);
      assert.deepEqual(names(store), ["old@1"]);
      assert.equal(h.reflector.hasSynced(), false);
    });

    it("stages the transformed objects and still checks the snapshot's consistency", async () => {
      const { h, store } = startStaging([], {
        consistencyCheck: true,
        transform: (o) => ({ ...o, data: { transformed: "yes" } }),
      });
      const w = await h.lw.nextWatch();
      w.emit(added(cm("a", "3", { big: "x" })), added(cm("b", "5")), endBookmark("10"));
      assert.deepEqual(store.inner.getByKey("default/a")?.data, { transformed: "yes" });
      const check = await h.lw.nextList();
      assert.deepEqual(check.options, { resourceVersion: "10", resourceVersionMatch: "Exact" });
      check.respond(list("10", [cm("a", "3"), cm("c", "2")]));
      await assert.rejects(h.done, (err: WatchListInconsistencyError) => {
        assert.deepEqual(err.differences, {
          onlyInWatchList: ["default/b"],
          onlyInList: ["default/c"],
          differentVersion: [],
        });
        return true;
      });
      await h.metrics.close();
    });
  });

  describe("resumeFrom", () => {
    it("makes no sync: synced at once, and the first request is a plain WATCH from that resourceVersion", async () => {
      const h = start({ resumeFrom: "42" });
      assert.equal(h.reflector.hasSynced(), true, "synced before any request");
      assert.equal(h.reflector.lastSyncResourceVersion, "42");
      assert.equal(h.reflector.lastSyncMode, "resumed");
      // What a wider reflector left in the store at RV 42.
      h.store.inner.add(cm("a", "40"));
      h.store.inner.add(cm("b", "41"));
      const w = await h.lw.nextWatch();
      assert.deepEqual(w.options, { resourceVersion: "42", allowWatchBookmarks: true, timeoutSeconds: 450 });
      w.emit(modified(cm("a", "43", { v: "2" })), deleted(cm("b", "44")), added(cm("c", "45")));
      assert.deepEqual(h.store.writes, [
        { op: "update", key: "default/a" },
        { op: "delete", key: "default/b" },
        { op: "add", key: "default/c" },
      ]);
      assert.deepEqual(h.store.inner.listKeys().sort(), ["default/a", "default/c"]);
      assert.equal(h.reflector.lastSyncResourceVersion, "45");
      // A clean end and a failure both resume from the last resourceVersion, without a list.
      await h.clock.advance(5_000);
      w.end();
      const next = await h.lw.nextWatch();
      assert.equal(next.options.resourceVersion, "45");
      next.fail(new ConnectionError(ctx, "reset"));
      await h.clock.advanceToNext();
      assert.equal((await h.lw.nextWatch()).options.resourceVersion, "45");
      assert.equal(h.lw.calls.filter((c) => c.verb === "list").length, 0, `no list: ${h.lw.describe()}`);
      assert.equal(await h.metrics.sum("tessera_reflector_watches_total", { mode: "watch-list" }), 0);
      await finish(h);
    });

    it("relists after a 410 on the resumed watch, replacing the store, and counts it as a relist", async () => {
      for (const watchList of [true, false]) {
        const h = start({ resumeFrom: "42", watchList });
        h.store.inner.add(cm("a", "40"));
        h.store.inner.add(cm("gone", "41"));
        const w = await h.lw.nextWatch();
        w.fail(eventError(410, "Expired"));
        await h.clock.flush(); // the failed watch's deadline is cancelled: the next timer is the backoff
        await h.clock.advanceToNext();
        if (watchList) {
          const again = await h.lw.nextWatch();
          assert.equal(again.options.sendInitialEvents, true);
          assert.equal(again.options.resourceVersion, "", "the expired resourceVersion is not reused");
          again.emit(added(cm("a", "50")), endBookmark("60"));
          assert.equal(h.reflector.lastSyncMode, "watch-list");
        } else {
          const l = await h.lw.nextList();
          assert.deepEqual(l.options, { resourceVersion: "", limit: 500 });
          l.respond(list("60", [cm("a", "50")]));
          await h.lw.nextWatch();
          assert.equal(h.reflector.lastSyncMode, "list");
        }
        assert.deepEqual(h.store.writes, [{ op: "replace", size: 1, resourceVersion: "60" }]);
        assert.deepEqual(h.store.inner.listKeys(), ["default/a"], "what the resumed store held is replaced");
        assert.equal(h.reflector.lastSyncResourceVersion, "60");
        assert.equal(await h.metrics.sum("tessera_reflector_relists_total", { reason: "expired" }), 1);
        await finish(h);
      }
    });

    it('treats "" as unset and refuses "0"', async () => {
      const h = start({ resumeFrom: "" });
      assert.equal(h.reflector.hasSynced(), false);
      assert.equal((await h.lw.nextWatch()).options.sendInitialEvents, true);
      await finish(h);
      assert.throws(
        () =>
          new Reflector<TestObject>({
            listerWatcher: h.lw,
            store: new RecordingStore<TestObject>(),
            resumeFrom: "0",
          }),
        RangeError,
      );
    });
  });

  describe("watch timeouts", () => {
    it("draws timeoutSeconds uniformly from [300, 600)", async () => {
      for (const [random, expected] of [
        [0, 300],
        [0.5, 450],
        [0.999999, 599],
      ] as const) {
        const h = start({ watchList: false }, random);
        const w = await syncByList(h, "1", []);
        assert.equal(w.options.timeoutSeconds, expected);
        await finish(h);
      }
    });

    it("does not honour a minimum under 5 minutes, and honours one above", async () => {
      const low = start({ watchList: false, minWatchTimeoutSeconds: 10 }, 0);
      assert.equal((await syncByList(low, "1", [])).options.timeoutSeconds, 300);
      await finish(low);
      const high = start({ watchList: false, minWatchTimeoutSeconds: 400 }, 0.5);
      assert.equal((await syncByList(high, "1", [])).options.timeoutSeconds, 600);
      await finish(high);
    });

    it("abandons a watch that receives nothing for its timeout plus the margin, then resumes it", async () => {
      const h = start({ watchList: false, inactivityMarginMs: 30_000 }, 0);
      const w = await syncByList(h, "7", [cm("a", "7")]);
      await h.clock.advance(200_000);
      w.emit(bookmark("8"));
      await h.clock.advance(329_999);
      assert.equal(w.closed, false, "activity restarted the deadline");
      await h.clock.advance(1);
      assert.equal(w.aborted, true);
      assert.equal((h.errors[0] as Error).name, "WatchDeadlineError");
      await h.clock.advanceToNext(); // backoff
      const next = await h.lw.nextWatch();
      assert.equal(next.options.resourceVersion, "8");
      assert.equal(h.store.writes.length, 1, "no relist");
      await finish(h);
    });
  });

  describe("watch endings", () => {
    it("resumes a cleanly ended watch at once, without relist or backoff", async () => {
      const h = start({ watchList: false });
      const w = await syncByList(h, "7", [cm("a", "7")]);
      w.emit(modified(cm("a", "8")));
      await h.clock.advance(450_000);
      w.end();
      const next = await h.lw.nextWatch();
      assert.equal(next.options.resourceVersion, "8");
      assert.equal(h.errors.length, 0);
      assert.equal(h.store.writes.filter((x) => x.op === "replace").length, 1);
      await finish(h);
    });

    it("backs off when a watch closes at once without an event", async () => {
      const h = start({ watchList: false });
      const w = await syncByList(h, "7", []);
      w.end();
      await h.clock.flush();
      assert.equal(h.lw.untaken, 0, "no immediate rewatch");
      assert.deepEqual(h.clock.pendingDelays(), [1200]);
      await h.clock.advance(1200);
      assert.equal((await h.lw.nextWatch()).options.resourceVersion, "7");
      await finish(h);
    });

    it("relists on a 410 after the first delay, not one grown while the server was unreachable; 410s in a row still grow it", async () => {
      const h = start({ watchList: false });
      let w = await syncByList(h, "7", []);
      // The server goes away: each retry of the watch fails, and the delay doubles (random 0.5: x1.5).
      for (const delay of [1200, 2400, 4800, 9600]) {
        w.fail(new ConnectionError(ctx, "connect ECONNREFUSED"));
        await h.clock.flush();
        assert.deepEqual(h.clock.pendingDelays(), [delay]);
        await h.clock.advance(delay);
        w = await h.lw.nextWatch();
      }
      // It is back, and answers 410 (its watch cache was reset): the relist waits the first delay.
      w.fail(eventError(410, "Expired"));
      await h.clock.flush();
      assert.deepEqual(h.clock.pendingDelays(), [1200]);
      await h.clock.advance(1200);
      w = await syncByList(h, "20", []);
      // 410 again straight after the relist: now the delay grows.
      w.fail(eventError(410, "Expired"));
      await h.clock.flush();
      assert.deepEqual(h.clock.pendingDelays(), [2400]);
      await finish(h);
    });

    it("relists after a 410 ERROR event and after an HTTP 410", async () => {
      for (const err of [eventError(410, "Expired"), httpError(410, "Gone")]) {
        const h = start({ watchList: false });
        const w = await syncByList(h, "7", [cm("a", "7"), cm("b", "7")]);
        w.fail(err);
        await h.clock.advanceToNext();
        const l = await h.lw.nextList();
        assert.equal(l.options.resourceVersion, "", "the expired resourceVersion is not reused");
        l.respond(list("40", [cm("a", "39")]));
        await h.clock.flush();
        assert.deepEqual(h.store.inner.listKeys(), ["default/a"]);
        assert.equal((await h.lw.nextWatch()).options.resourceVersion, "40");
        assert.equal(await h.metrics.sum("tessera_reflector_relists_total", { reason: "expired" }), 1);
        await finish(h);
      }
    });

    it("keeps what was stored when a watch line is malformed, and resumes after the last good event", async () => {
      const h = start({ watchList: false });
      const w = await syncByList(h, "7", [cm("a", "7"), cm("b", "7")]);
      w.emit(modified(cm("a", "8", { v: "2" })));
      w.fail(new StreamDecodeError(ctx, "undecodable line in the watch stream", '{"type":"MODIF'));
      await h.clock.flush();
      const err = h.errors[0] as StreamDecodeError;
      assert.equal(err.reason, "MalformedStream");
      assert.match(err.message, /^watch configmaps: MalformedStream/);
      assert.deepEqual(h.store.inner.getByKey("default/a")?.data, { v: "2" });
      assert.equal(h.store.inner.size, 2);
      await h.clock.advanceToNext();
      assert.equal((await h.lw.nextWatch()).options.resourceVersion, "8");
      assert.equal(h.store.writes.filter((x) => x.op === "replace").length, 1, "no relist");
      await finish(h);
    });

    it("surfaces a 403 on watch with resource and verb, and retries the watch with backoff", async () => {
      const h = start({ watchList: false });
      const w = await syncByList(h, "7", []);
      w.fail(httpError(403, "Forbidden"));
      await h.clock.flush();
      const err = h.errors[0] as ApiStatusError;
      assert.equal(err.code, 403);
      assert.equal(err.verb, "watch");
      assert.equal(err.resource, "configmaps");
      await h.clock.advance(1200);
      assert.equal((await h.lw.nextWatch()).options.resourceVersion, "7");
      await finish(h);
    });
  });

  describe("backoff", () => {
    it("waits 800 ms x2 up to 30 s, each plus jitter, between failed lists", async () => {
      const h = start({ watchList: false }, 0.5);
      const delays: number[] = [];
      for (let i = 0; i < 8; i++) {
        const l = await h.lw.nextList();
        l.fail(httpError(404, "NotFound", "list"));
        await h.clock.flush();
        const [delay] = h.clock.pendingDelays();
        delays.push(delay as number);
        await h.clock.advance(delay as number);
      }
      // d + 0.5 * d with d = 800, 1600, ..., 25600, then capped at 30000.
      assert.deepEqual(delays, [1200, 2400, 4800, 9600, 19200, 38400, 45000, 45000]);
      assert.equal(h.errors.length, 8);
      const err = h.errors[0] as ApiStatusError;
      assert.equal(err.verb, "list");
      assert.equal(err.reason, "NotFound");
      await finish(h);
    });

    it("starts again from 800 ms after two minutes without a failure", async () => {
      const h = start({ watchList: false }, 0);
      (await h.lw.nextList()).fail(httpError(500, "InternalError", "list"));
      await h.clock.advance(800);
      (await h.lw.nextList()).fail(httpError(500, "InternalError", "list"));
      await h.clock.flush();
      assert.deepEqual(h.clock.pendingDelays(), [1600]);
      await h.clock.advance(1600);
      const w = await syncByList(h, "5", []);
      await h.clock.advance(60_000);
      w.fail(new ConnectionError(ctx, "reset"));
      await h.clock.flush();
      assert.deepEqual(h.clock.pendingDelays(), [3200], "within two minutes the backoff keeps growing");
      await h.clock.advance(3200);
      const w2 = await h.lw.nextWatch();
      await h.clock.advance(120_001);
      w2.fail(new ConnectionError(ctx, "reset"));
      await h.clock.flush();
      assert.deepEqual(h.clock.pendingDelays(), [800], "reset after two quiet minutes");
      await finish(h);
    });
  });

  describe("pager rules", () => {
    it("pages the first list at RV 0 by 500 and follows continue tokens without resourceVersion", async () => {
      const h = start({ watchList: false });
      const p1 = await h.lw.nextList();
      assert.deepEqual(p1.options, { resourceVersion: "0", limit: 500 });
      p1.respond(list("10", [cm("a", "1")], "tok1"));
      const p2 = await h.lw.nextList();
      assert.deepEqual(p2.options, { limit: 500, continue: "tok1" });
      p2.respond(list("10", [cm("b", "2")]));
      await h.lw.nextWatch();
      assert.deepEqual(h.store.writes, [{ op: "replace", size: 2, resourceVersion: "10" }]);
      await finish(h);
    });

    it("relists with a consistent read after ResourceVersionTooLarge", async () => {
      const h = start({ watchList: false });
      const w = await syncByList(h, "10", [cm("a", "1")]);
      w.fail(httpError(500, "InternalError"));
      await h.clock.advanceToNext();
      const w2 = await h.lw.nextWatch();
      w2.emit(bookmark("12"));
      w2.fail(
        new ApiStatusError(
          ctx,
          504,
          "Timeout",
          "too large",
          {
            ...status(504, "Timeout"),
            details: { causes: [{ reason: "ResourceVersionTooLarge" }] },
          },
          "event",
        ),
      );
      await h.clock.advanceToNext();
      const l = await h.lw.nextList();
      assert.deepEqual(l.options, { resourceVersion: "", limit: 500 });
      await finish(h);
    });

    it("keeps paginating after a list at RV 0 came back paginated, and a user page size wins", async () => {
      const h = start({ watchList: false });
      const p1 = await h.lw.nextList();
      p1.respond(list("10", [cm("a", "1")], "tok"));
      (await h.lw.nextList()).respond(list("10", [cm("b", "1")]));
      const w = await h.lw.nextWatch();
      w.emit(bookmark("20"));
      w.fail(eventError(410, "Expired"));
      await h.clock.advanceToNext();
      const relist = await h.lw.nextList();
      assert.deepEqual(relist.options, { resourceVersion: "", limit: 500 });
      await finish(h);

      const user = start({ watchList: false, pageSize: 50 });
      assert.deepEqual((await user.lw.nextList()).options, { resourceVersion: "0", limit: 50 });
      await finish(user);
    });

    it("restarts a list whose continue token expired as one unpaginated list", async () => {
      const h = start({ watchList: false });
      (await h.lw.nextList()).respond(list("10", [cm("a", "1")], "tok"));
      (await h.lw.nextList()).fail(httpError(410, "Expired", "list"));
      const whole = await h.lw.nextList();
      assert.deepEqual(whole.options, { resourceVersion: "0" });
      whole.respond(list("12", [cm("a", "1"), cm("b", "2"), cm("c", "3")]));
      await h.lw.nextWatch();
      assert.deepEqual(h.store.writes, [{ op: "replace", size: 3, resourceVersion: "12" }]);
      await finish(h);
    });
  });

  describe("consistency check", () => {
    it("lists at the synced resourceVersion and passes when the snapshot matches", async () => {
      const h = start({ consistencyCheck: true });
      const w = await h.lw.nextWatch();
      w.emit(added(cm("a", "3")), added(cm("b", "5")), endBookmark("10"));
      const check = await h.lw.nextList();
      assert.deepEqual(check.options, { resourceVersion: "10", resourceVersionMatch: "Exact" });
      check.respond(list("10", [cm("b", "5"), cm("a", "3")]));
      await h.clock.flush();
      assert.equal(await h.metrics.sum("tessera_reflector_consistency_check_failures_total"), 0);
      await finish(h);
    });

    it("fails loudly when the snapshot differs from the LIST", async () => {
      const h = start({ consistencyCheck: true });
      const w = await h.lw.nextWatch();
      w.emit(added(cm("a", "3")), added(cm("b", "5")), endBookmark("10"));
      const check = await h.lw.nextList();
      check.respond(list("10", [cm("a", "4"), cm("c", "2")]));
      await assert.rejects(h.done, (err: WatchListInconsistencyError) => {
        assert.equal(err.name, "WatchListInconsistencyError");
        assert.deepEqual(err.differences, {
          onlyInWatchList: ["default/b"],
          onlyInList: ["default/c"],
          differentVersion: ["default/a"],
        });
        return true;
      });
      assert.equal(w.aborted, true, "the reflector stopped");
      assert.equal(h.logger.matching(/CONSISTENCY CHECK FAILED/, "error").length, 1);
      assert.equal(await h.metrics.sum("tessera_reflector_consistency_check_failures_total"), 1);
      await h.metrics.close();
    });
  });

  describe("lifecycle", () => {
    it("stops through the AbortSignal, closing the open watch", async () => {
      const h = start({ watchList: false });
      const w = await syncByList(h, "1", []);
      h.stop.abort();
      await h.done;
      assert.equal(w.aborted, true);
      await h.metrics.close();
    });

    it("stops during a backoff wait without waiting it out", async () => {
      const h = start({ watchList: false });
      (await h.lw.nextList()).fail(httpError(500, "InternalError", "list"));
      await h.clock.flush();
      h.stop.abort();
      await h.done;
      assert.equal(h.clock.pendingTimers, 0);
      await h.metrics.close();
    });

    it("refuses a second concurrent run", async () => {
      const h = start();
      await assert.rejects(h.reflector.run(new AbortController().signal), ReflectorRunningError);
      await finish(h);
    });

    it("feeds a DeltaFIFO: the snapshot as Replaced deltas, tombstones for objects gone across a relist", async () => {
      const clock = new FakeClock();
      const lw = new ScriptedListerWatcher<TestObject>();
      const cache = new IndexedStore<TestObject>();
      const fifo = new DeltaFIFO<TestObject>({ knownObjects: cache });
      const reflector = new Reflector<TestObject>({
        listerWatcher: lw,
        store: fifo,
        clock,
        random: () => 0,
      });
      const stop = new AbortController();
      const done = reflector.run(stop.signal);
      const w = await lw.nextWatch();
      w.emit(added(cm("a", "1")), added(cm("b", "2")), endBookmark("5"));
      const drain = (): string[] => {
        const seen: string[] = [];
        while (
          fifo.popSync((batch) => {
            for (const d of batch.deltas) {
              seen.push(`${d.type}:${batch.key}`);
              if (d.type === "Deleted") cache.delete(d.object);
              else cache.update(d.object as TestObject);
            }
          })
        );
        return seen;
      };
      assert.deepEqual(drain(), ["Replaced:default/a", "Replaced:default/b"]);
      assert.equal(fifo.hasSynced(), true);
      w.fail(eventError(410, "Expired"));
      await clock.advanceToNext();
      const again = await lw.nextWatch();
      again.emit(added(cm("b", "7")), endBookmark("9"));
      assert.deepEqual(drain(), ["Replaced:default/b", "Deleted:default/a"]);
      assert.deepEqual(cache.listKeys(), ["default/b"]);
      stop.abort();
      await done;
    });
  });
});
