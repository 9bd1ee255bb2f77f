import { strict as assert } from "node:assert";
import { FakeClock } from "@tessera/core/testing";
import { ApiStatusError, ConnectionError, NAMESPACE_INDEX, type WatchEvent } from "@tessera/reflector";
import { ScriptedListerWatcher, type ScriptedWatch } from "@tessera/reflector/testing";
import type { ObjectList } from "@tessera/client";
import { SharedIndexInformer } from "../src/index.js";
import { settle, type Widget } from "./informer-harness.js";

// A first watch-list sync is filed into a staged cache as it arrives (not queued in the DeltaFIFO and
// popped after the end bookmark): what readers, handlers and the sync signal see must be as before.

const ctx = { resource: "configmaps", verb: "watch" as const };

function w(name: string, rv: string, size = 0, namespace = "default"): Widget {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace, resourceVersion: rv },
    spec: { size },
  };
}
const added = (o: Widget): WatchEvent<Widget> => ({ type: "ADDED", object: o });
const modified = (o: Widget): WatchEvent<Widget> => ({ type: "MODIFIED", object: o });
const endBookmark = (rv: string): WatchEvent<Widget> => ({
  type: "BOOKMARK",
  object: {
    kind: "ConfigMap",
    metadata: { name: "", resourceVersion: rv, annotations: { "k8s.io/initial-events-end": "true" } },
  } as Widget,
});
const list = (rv: string, items: Widget[]): ObjectList<Widget> => ({
  kind: "ConfigMapList",
  metadata: { resourceVersion: rv },
  items,
});

/** What a handler was handed, in order. */
type Seen = string[];

function setup() {
  const clock = new FakeClock();
  const lw = new ScriptedListerWatcher<Widget>();
  const informer = new SharedIndexInformer<Widget>({
    listerWatcher: lw,
    clock,
    reflector: { watchList: true },
    transform: (o) => ({ ...o, metadata: { ...o.metadata, labels: { transformed: "yes" } } }),
  });
  const seen: Seen = [];
  const name = (o: Widget) => `${o.metadata.name}@${o.metadata.resourceVersion}`;
  informer.addEventHandler(
    {
      onAdd: (o, initial) => {
        seen.push(`add ${name(o)}${initial ? " initial" : ""}`);
      },
      onUpdate: (old, o) => {
        seen.push(old === o ? `resync ${name(o)}` : `update ${name(o)}`);
      },
      onDelete: (o) => {
        seen.push(`delete ${"key" in o ? o.key : name(o)}`);
      },
    },
    { resyncPeriodMs: 1_000 },
  );
  const stop = new AbortController();
  const done = informer.run(stop.signal);
  const cached = () => informer.lister.list().map(name);
  /** What the handler was handed so far, resyncs left out. */
  const events = (): Seen => seen.filter((e) => !e.startsWith("resync"));
  return { clock, lw, informer, seen, events, cached, stop, done };
}

describe("SharedIndexInformer: a first watch-list sync staged as it arrives", () => {
  it("shows nothing to readers, handlers or the sync signal before the end bookmark, then everything at once", async () => {
    const s = setup();
    const watch = await s.lw.nextWatch();
    watch.emit(added(w("a", "3")), added(w("b", "5", 0, "other")), added(w("a", "4")));
    await settle(() => false, 20);
    assert.deepEqual(s.cached(), [], "nothing cached before the bookmark");
    assert.deepEqual(s.events(), [], "no handler called before the bookmark");
    assert.equal(s.informer.hasSynced(), false);
    watch.emit(endBookmark("10"));
    assert.equal(s.informer.hasSynced(), true, "synced at the bookmark");
    assert.deepEqual(s.cached(), ["a@4", "b@5"], "a key sent twice: its first place, its later object");
    assert.deepEqual(
      s.informer.lister.byIndex(NAMESPACE_INDEX, "other").map((o) => o.metadata.name),
      ["b"],
    );
    assert.equal(s.informer.lister.get("a", "default")?.metadata.labels?.transformed, "yes", "transformed");
    assert.equal(s.informer.lastSyncResourceVersion, "10");
    await settle(() => s.events().length >= 2);
    assert.deepEqual(s.events(), ["add a@4 initial", "add b@5 initial"]);
    // Live events after the bookmark come after the snapshot, through the FIFO as before.
    watch.emit(modified(w("b", "11", 1, "other")), added(w("c", "12")));
    await settle(() => s.events().length >= 4);
    assert.deepEqual(s.events().slice(2), ["update b@11", "add c@12"]);
    // The staged objects are tracked for resync like any other.
    await s.clock.advance(3_000);
    const resyncs = () => s.seen.filter((e) => e.startsWith("resync"));
    await settle(() => resyncs().length >= 3);
    assert.deepEqual(new Set(resyncs()), new Set(["resync a@4", "resync b@11", "resync c@12"]));
    s.stop.abort();
    await s.done;
  });

  it("drops the staged objects when the watch-list fails, and syncs from the fallback LIST alone", async () => {
    const s = setup();
    const watch = await s.lw.nextWatch();
    watch.emit(added(w("a", "3")), added(w("gone", "4")));
    watch.fail(new ConnectionError(ctx, "the watch stream broke: ECONNRESET"));
    const l = await s.lw.nextList();
    assert.deepEqual(s.cached(), []);
    assert.equal(s.informer.hasSynced(), false);
    l.respond(list("9", [w("a", "3"), w("c", "8")]));
    await settle(() => s.informer.hasSynced() && s.events().length >= 2);
    assert.deepEqual(s.cached(), ["a@3", "c@8"]);
    assert.deepEqual(
      s.events(),
      ["add a@3 initial", "add c@8 initial"],
      "nothing of the failed attempt reached a handler",
    );
    s.stop.abort();
    await s.done;
  });

  it("drops the staged objects when stopped before the bookmark", async () => {
    const s = setup();
    const watch = await s.lw.nextWatch();
    watch.emit(added(w("a", "3")));
    s.stop.abort();
    await s.done;
    assert.deepEqual(s.cached(), []);
    assert.deepEqual(s.events(), []);
    assert.equal(s.informer.hasSynced(), false);
  });

  it("goes through the FIFO for a relist of a filled cache: tombstones for what is gone, updates for what changed", async () => {
    const s = setup();
    const watch = await s.lw.nextWatch();
    watch.emit(added(w("a", "3")), added(w("b", "4")), added(w("c", "5")), endBookmark("10"));
    await settle(() => s.events().length >= 3);
    const again = await relistAfter410(s, watch);
    again.emit(added(w("a", "3")), added(w("c", "15")), added(w("d", "16")));
    assert.deepEqual(s.cached(), ["a@3", "b@4", "c@5"], "the cache is as it was until the bookmark");
    again.emit(endBookmark("20"));
    await settle(() => s.events().length >= 6);
    assert.deepEqual(s.events().slice(3), ["update c@15", "add d@16", "delete default/b"]);
    assert.deepEqual(s.cached(), ["a@3", "c@15", "d@16"]);
    s.stop.abort();
    await s.done;
  });

  it("stages a relist into an empty cache too, its adds not part of the initial list", async () => {
    const s = setup();
    const watch = await s.lw.nextWatch();
    watch.emit(endBookmark("10"));
    assert.equal(s.informer.hasSynced(), true, "an empty collection syncs at its bookmark");
    const again = await relistAfter410(s, watch);
    again.emit(added(w("a", "11")), added(w("b", "12")));
    await settle(() => false, 20);
    assert.deepEqual(s.cached(), []);
    again.emit(endBookmark("20"));
    await settle(() => s.events().length >= 2);
    assert.deepEqual(s.events(), ["add a@11", "add b@12"]);
    s.stop.abort();
    await s.done;
  });
});

/** Fails `watch` with a 410 and returns the watch-list the reflector relists with (after its backoff). */
async function relistAfter410(
  s: ReturnType<typeof setup>,
  watch: ScriptedWatch<Widget>,
): Promise<ScriptedWatch<Widget>> {
  const calls = s.lw.calls.length;
  watch.fail(new ApiStatusError(ctx, 410, "Expired", "too old resource version", undefined, "event"));
  for (let i = 0; i < 40 && s.lw.calls.length === calls; i++) await s.clock.advance(100);
  const again = await s.lw.nextWatch();
  assert.equal(again.options.sendInitialEvents, true);
  return again;
}
