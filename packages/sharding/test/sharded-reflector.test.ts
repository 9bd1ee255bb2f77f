import { strict as assert } from "node:assert";
import type { DataPoint } from "@opentelemetry/sdk-metrics";
import { CapturingLogger, FakeClock, TestMetrics } from "@tessera/core/testing";
import { InMemoryListerWatcher } from "@tessera/reflector/testing";
import { ShardedReflector, ShardedReflectorStateError } from "../src/index.js";
import { HASH_SPACE, ShardSelector, ShardSelectorError, SlotSpace, type HashRange } from "../src/ranges.js";
import { item, type Item } from "./item.js";
import { describeObjects, RecordingStore } from "./recording-store.js";
import { selectByShard } from "./shard-selection.js";

const Q = HASH_SPACE / 4n;
/** Quarters [a, b) of the space as one range. */
const q = (a: number, b = a + 1): HashRange => ({ start: BigInt(a) * Q, end: BigInt(b) * Q });
const UID = "object.metadata.uid" as const;
const sel = (...ranges: HashRange[]) => ShardSelector.of(UID, ranges);

async function settle(done: () => boolean = () => false, turns = 2_000): Promise<void> {
  for (let i = 0; i < turns && !done(); i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** Every metric's data points, by name. */
async function points(metrics: TestMetrics): Promise<Map<string, DataPoint<number>[]>> {
  const out = new Map<string, DataPoint<number>[]>();
  for (const [name, m] of await metrics.collect()) out.set(name, m.dataPoints as DataPoint<number>[]);
  return out;
}

interface Setup {
  serverFilters?: boolean;
  useWatchList?: boolean;
  objects?: number;
}

function setup(options: Setup = {}) {
  const lw = new InMemoryListerWatcher<Item>({
    resource: "items.test.example",
    select: (options.serverFilters ?? true) ? selectByShard<Item> : undefined,
  });
  for (let i = 0; i < (options.objects ?? 200); i++) lw.put(item(`o-${i}`));
  const store = new RecordingStore<Item>();
  const clock = new FakeClock();
  const logger = new CapturingLogger();
  const metrics = new TestMetrics();
  const sharded = new ShardedReflector<Item>({
    listerWatcher: lw,
    store,
    ring: "ring-1",
    member: "member-a",
    clock,
    random: () => 0.5,
    logger,
    meter: metrics.meter,
    reflector: { watchList: options.useWatchList ?? true, consistencyCheck: false },
  });
  const stop = new AbortController();
  let done: Promise<void> | undefined;
  return {
    lw,
    clock,
    store,
    logger,
    metrics,
    sharded,
    stop,
    start: () => {
      done = sharded.run(stop.signal);
    },
    finish: async () => {
      stop.abort();
      await done;
    },
    /** What the store must hold for `ranges`: the collection, filtered client-side. */
    expected: (...ranges: HashRange[]) =>
      describeObjects(lw.snapshot((o) => sel(...ranges).matchesObject(o)).values()),
    /** Requests made since `from` (an index into lw.requests). */
    since: (from: number) => lw.requests.slice(from),
  };
}

describe("ShardedReflector (in-memory collection, fake clock)", () => {
  const finishers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const f of finishers.splice(0)) await f();
  });
  function started(options: Setup = {}) {
    const h = setup(options);
    finishers.push(h.finish);
    return h;
  }

  for (const useWatchList of [true, false]) {
    const how = useWatchList ? "watch-list" : "LIST + WATCH";
    it(`gaining a range syncs only that range (${how}); a kept range is never asked for again`, async () => {
      const h = started({ useWatchList });
      await h.sharded.setRanges([q(0)]);
      h.start();
      assert.equal(await h.sharded.waitForSync(), true);
      assert.deepEqual(h.store.view(), h.expected(q(0)));
      assert.ok(h.store.view().length > 20, "the quarter holds objects");

      const mark = h.lw.requests.length;
      const writesBefore = h.store.take();
      assert.ok(writesBefore.every((w) => w.op === "add"));
      h.lw.pause();
      await h.sharded.setRanges([q(0), q(1)]); // one run [0, 1/2): q0 kept, q1 new
      await settle(undefined, 10);
      assert.equal(h.sharded.hasSynced(), false, "the new range is not synced yet");
      h.lw.resume();
      assert.equal(await h.sharded.waitForSync(), true);
      assert.deepEqual(h.store.view(), h.expected(q(0, 2)));
      const sent = h.since(mark).map((r) => r.options.shardSelector);
      assert.ok(sent.length > 0);
      assert.ok(
        sent.every((s) => s === sel(q(1)).toString()),
        `requests after the gain: ${sent.join(" ; ")}`,
      );
      const syncs = h.since(mark).filter((r) => r.verb === "list" || "sendInitialEvents" in r.options);
      assert.equal(syncs.length, 1, "one sync, of the new range only");
      assert.ok(
        h.store.take().every((w) => w.op === "add" && sel(q(1)).matchesKey(w.uid!)),
        "only the new range's objects were written",
      );
      assert.equal(h.store.replaces, 0);
      assert.equal(h.sharded.rangeCount, 2, "kept and gained ranges are watched separately");

      // live changes land in the store through the right range
      for (let i = 0; i < 40; i++) h.lw.put(item(`live-${i}`));
      h.lw.put(item("o-1", "changed"));
      h.lw.delete("default/o-2");
      await settle(() => h.store.view().length === h.expected(q(0, 2)).length);
      await settle(undefined, 5);
      assert.deepEqual(h.store.view(), h.expected(q(0, 2)));
    });
  }

  it("losing a range stops its watch and evicts exactly its objects, with plain deletes and no request", async () => {
    const h = started();
    await h.sharded.setRanges([q(0), q(2)]);
    h.start();
    await h.sharded.waitForSync();
    assert.deepEqual(h.store.view(), h.expected(q(0), q(2)));
    const lostKeys = h.expected(q(2)).map(([k]) => k);
    h.store.take();
    const mark = h.lw.requests.length;
    await h.sharded.setRanges([q(0)]);
    const writes = h.store.take();
    assert.deepEqual(writes.map((w) => w.key).sort(), [...lostKeys].sort());
    assert.ok(writes.every((w) => w.op === "delete" && !w.tombstone));
    assert.deepEqual(h.store.view(), h.expected(q(0)));
    assert.equal(h.since(mark).length, 0, "nothing is listed or watched again");
    await settle(() => h.lw.openWatches === 1);
    assert.equal(h.lw.openWatches, 1, "the lost range's watch is closed");
    // changes in the lost range no longer reach the store
    for (let i = 0; i < 40; i++) h.lw.put(item(`after-${i}`));
    await settle(undefined, 20);
    assert.deepEqual(h.store.view(), h.expected(q(0)));
  });

  it("a shrinking range resumes its kept part from the old resourceVersion: no list, nothing missed", async () => {
    const h = started();
    await h.sharded.setRanges([q(0, 2)]);
    h.start();
    await h.sharded.waitForSync();
    h.lw.put(item("o-3", "moved on"));
    h.lw.bookmark();
    await settle(() => h.sharded.rangeStates()[0]!.resourceVersion === h.lw.resourceVersion);
    const [before] = h.sharded.rangeStates();
    assert.equal(before!.resourceVersion, h.lw.resourceVersion);
    h.store.take();

    const mark = h.lw.requests.length;
    h.lw.pause();
    await h.sharded.setRanges([q(0)]);
    // q1 is evicted at once
    const evicted = h.store.take();
    assert.deepEqual(
      evicted.map((w) => w.key).sort(),
      h.expected(q(1)).map(([k]) => k),
    );
    assert.ok(evicted.every((w) => w.op === "delete" && !w.tombstone));
    assert.deepEqual(h.store.view(), h.expected(q(0)));
    assert.equal(h.sharded.hasSynced(), true, "the kept part is synced without listing");
    // changes while the new watch is not open yet are replayed from the resourceVersion
    for (let i = 0; i < 30; i++) h.lw.put(item(`gap-${i}`));
    h.lw.resume();
    await settle(() => h.store.view().length === h.expected(q(0)).length);
    await settle(undefined, 5);
    assert.deepEqual(h.store.view(), h.expected(q(0)));
    const requests = h.since(mark);
    assert.deepEqual(
      requests.map((r) => [
        r.verb,
        r.options.resourceVersion,
        r.options.shardSelector,
        "sendInitialEvents" in r.options,
      ]),
      [["watch", before!.resourceVersion, sel(q(0)).toString(), false]],
    );
    const [after] = h.sharded.rangeStates();
    assert.equal(after!.mode, "resumed");
    assert.deepEqual(after!.range, q(0));
    assert.equal(after!.objects, h.expected(q(0)).length);
  });

  it("a range that keeps two pieces resumes both, and a 410 later relists only the piece it hit", async () => {
    const h = started();
    await h.sharded.setRanges([q(0, 4)]);
    h.start();
    await h.sharded.waitForSync();
    h.store.take();
    const mark = h.lw.requests.length;
    await h.sharded.setRanges([q(0), q(2, 4)]);
    await settle(() => h.lw.openWatches === 2);
    assert.deepEqual(h.store.view(), h.expected(q(0), q(2, 4)));
    assert.deepEqual(
      h.since(mark).map((r) => [r.verb, r.options.shardSelector]),
      [
        ["watch", sel(q(0)).toString()],
        ["watch", sel(q(2, 4)).toString()],
      ],
    );
    // silent changes, seen only by a relist: one in each piece
    const inFirst = h.expected(q(0))[0]![0].slice("default/".length);
    const inSecond = h.expected(q(2, 4))[0]![0].slice("default/".length);
    h.lw.delete(`default/${inFirst}`, { silent: true });
    h.lw.delete(`default/${inSecond}`, { silent: true });
    h.store.take();
    const mark2 = h.lw.requests.length;
    h.lw.expire((o) => o.shardSelector === sel(q(0)).toString());
    await h.clock.advance(2_000); // the backoff before a relist
    await settle(() => h.store.writes.length > 0);
    await settle(() => h.sharded.hasSynced());
    await settle(undefined, 5);
    const writes = h.store.take();
    assert.deepEqual(writes, [
      { op: "delete", key: `default/${inFirst}`, tombstone: true, uid: writes[0]!.uid },
    ]);
    assert.ok(
      h.store.view().some(([k]) => k === `default/${inSecond}`),
      "the other piece is untouched by the first piece's relist",
    );
    assert.ok(
      h.since(mark2).every((r) => r.options.shardSelector === sel(q(0)).toString()),
      "only the expired piece asked again",
    );
    assert.equal(h.store.replaces, 0);
  });

  it("filters client-side when the server ignores shardSelector: exact selector sent, others' events dropped, bookmarks kept", async () => {
    for (const useWatchList of [true, false]) {
      const h = started({ serverFilters: false, useWatchList });
      await h.sharded.setRanges([q(1)]);
      h.start();
      await h.sharded.waitForSync();
      await settle(() => h.lw.openWatches === 1);
      assert.deepEqual(h.store.view(), h.expected(q(1)));
      const sent = h.lw.requests.filter((r) => r.options.limit !== 1).map((r) => r.options.shardSelector);
      assert.deepEqual(
        [...new Set(sent)],
        ["shardRange(object.metadata.uid, '0x4000000000000000', '0x8000000000000000')"],
      );
      for (let i = 0; i < 60; i++) h.lw.put(item(`live-${i}`));
      h.lw.bookmark();
      await settle(() => h.sharded.rangeStates()[0]!.resourceVersion === h.lw.resourceVersion);
      assert.equal(
        h.sharded.rangeStates()[0]!.resourceVersion,
        h.lw.resourceVersion,
        "the bookmark passed the filter",
      );
      assert.deepEqual(h.store.view(), h.expected(q(1)));
      await settle(() => h.sharded.serverFiltering !== undefined);
      assert.equal(h.sharded.serverFiltering, false);
      const m = await points(h.metrics);
      const filtered = m.get("tessera_sharding_client_filtered_total")?.[0]?.value ?? 0;
      assert.equal(
        filtered,
        200 + 60 - h.expected(q(1)).length,
        "every object outside the range dropped once",
      );
      assert.equal(m.get("tessera_sharding_server_filtering")?.[0]?.value, 0);
    }
  });

  it("probes once whether the server filters, logs it once, and reports it and the cached objects as metrics", async () => {
    for (const serverFilters of [true, false]) {
      const h = started({ serverFilters });
      await h.sharded.setRanges([q(3)]);
      h.start();
      await h.sharded.waitForSync();
      await settle(() => h.sharded.serverFiltering !== undefined);
      assert.equal(h.sharded.serverFiltering, serverFilters);
      const probes = h.lw.requests.filter((r) => r.verb === "list" && r.options.limit === 1);
      assert.equal(probes.length, 1);
      assert.equal(
        probes[0]!.options.resourceVersion,
        undefined,
        "not RV 0, where the cache ignores the limit",
      );
      ShardSelector.parse(probes[0]!.options.shardSelector!);
      const logged = h.logger.lines.filter((l) => l.level === "info" && /filter/.test(l.message));
      assert.equal(logged.length, 1);
      assert.equal(logged[0]!.fields?.serverFiltering, serverFilters);
      const m = await points(h.metrics);
      const gauge = m.get("tessera_sharding_server_filtering")![0]!;
      assert.equal(gauge.value, serverFilters ? 1 : 0);
      assert.deepEqual(gauge.attributes, {
        resource: "items.test.example",
        ring: "ring-1",
        member: "member-a",
      });
      const cached = m.get("tessera_sharding_cached_objects")![0]!;
      assert.equal(cached.value, h.expected(q(3)).length);
      assert.equal(cached.attributes.member, "member-a");
      assert.equal(m.get("tessera_sharding_range_watches")![0]!.value, 1);
    }
  });

  it("is not synced before ranges are set nor while a gained range lists; no ranges is a complete (empty) view", async () => {
    const h = started();
    h.start();
    await settle(undefined, 10);
    assert.equal(h.sharded.hasSynced(), false, "no assignment yet");
    h.lw.pause();
    await h.sharded.setSlots([0, 1], new SlotSpace(8));
    assert.deepEqual(h.sharded.ranges, [{ start: 0n, end: HASH_SPACE / 4n }]);
    assert.equal(h.sharded.hasSynced(), false);
    let synced = false;
    void h.sharded.waitForSync().then((s) => (synced = s));
    const gaveUp = new AbortController();
    const abandoned = h.sharded.waitForSync(gaveUp.signal);
    gaveUp.abort();
    assert.equal(await abandoned, false, "an aborted wait resolves false");
    await settle(undefined, 10);
    assert.equal(synced, false);
    h.lw.resume();
    await settle(() => synced);
    assert.equal(synced, true);
    await h.sharded.setRanges([]);
    assert.deepEqual(h.store.view(), []);
    assert.equal(h.sharded.hasSynced(), true);
    assert.equal(h.sharded.rangeCount, 0);
  });

  it("answers a pending waitForSync false when the run ends unsynced, and a later one at once", async () => {
    const h = started();
    h.start();
    const waiting = h.sharded.waitForSync();
    await settle(undefined, 10);
    h.stop.abort();
    assert.equal(await waiting, false, "the run ended before any range was set");
    assert.equal(await h.sharded.waitForSync(), false);
  });

  it("refuses malformed ranges before anything is sent, and a second run", async () => {
    const h = started();
    assert.throws(() => h.sharded.setRanges([{ start: 5n, end: 5n }]), ShardSelectorError);
    assert.throws(() => h.sharded.setRanges([{ start: 0n, end: HASH_SPACE + 1n }]), ShardSelectorError);
    h.start();
    await assert.rejects(h.sharded.run(new AbortController().signal), ShardedReflectorStateError);
  });

  it("keeps the store equal to the client-side-filtered collection through random changes and reassignments", async () => {
    const h = started({ objects: 100 });
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const space = new SlotSpace(16);
    let slots = [0, 1, 2, 3, 4, 5];
    await h.sharded.setSlots(slots, space);
    h.start();
    await h.sharded.waitForSync();
    for (let round = 0; round < 25; round++) {
      for (let i = 0; i < 20; i++) {
        const name = `o-${Math.floor(random() * 150)}`;
        if (random() < 0.25) h.lw.delete(`default/${name}`);
        else h.lw.put(item(name, String(round)));
      }
      slots = Array.from({ length: 16 }, (_, s) => s).filter(() => random() < 0.4);
      await h.sharded.setSlots(slots, space);
      await h.sharded.waitForSync();
      if (round % 5 === 4) {
        h.lw.expire();
        await h.clock.advance(60_000); // past the backoff before relisting
      }
      await settle(undefined, 30);
      const expected = slots.length === 0 ? [] : h.expected(...space.rangesOf(slots));
      assert.deepEqual(h.store.view(), expected, `round ${round}`);
    }
    assert.equal(h.store.replaces, 0);
  });
});
