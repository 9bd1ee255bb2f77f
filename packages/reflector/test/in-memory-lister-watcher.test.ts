import { strict as assert } from "node:assert";
import {
  ApiStatusError,
  IndexedStore,
  INITIAL_EVENTS_END_ANNOTATION,
  isResourceExpired,
  listAllPages,
  Reflector,
  type WatchEvent,
  type WatchOptions,
} from "../src/index.js";
import { type KubeObject } from "@tessera/client";
import { InMemoryListerWatcher, type Selection } from "../src/testing/index.js";

interface Widget extends KubeObject {
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: { size: number };
}

function widget(name: string, size = 0, namespace = "default", labels?: Record<string, string>): Widget {
  return { metadata: { name, namespace, ...(labels ? { labels } : {}) }, spec: { size } };
}

async function settle(done: () => boolean = () => false, turns = 200): Promise<void> {
  for (let i = 0; i < turns && !done(); i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** Opens a watch that records what it gets. */
function watching(lw: InMemoryListerWatcher<Widget>, options: WatchOptions) {
  const events: WatchEvent<Widget>[] = [];
  const stop = new AbortController();
  let outcome: "open" | "ended" | Error = "open";
  const done = lw
    .watch(options, (e) => events.push(e), stop.signal)
    .then(
      () => void (outcome = "ended"),
      (err: unknown) => void (outcome = err as Error),
    );
  return {
    events,
    stop,
    done,
    outcome: () => outcome,
    /** `TYPE name@rv` of each event. */
    seen: () =>
      events.map((e) => `${e.type} ${e.object.metadata.name ?? ""}@${e.object.metadata.resourceVersion}`),
  };
}

/** Selects by the `tier` label when the request's labelSelector is `tier=<value>`, echoing nothing. */
const byTier = (options: { labelSelector?: string }): Selection<Widget> | undefined => {
  const m = /^tier=(\w+)$/.exec(options.labelSelector ?? "");
  if (!m) return undefined;
  return { matches: (o) => o.metadata.labels?.["tier"] === m[1] };
};

describe("InMemoryListerWatcher", () => {
  describe("writes", () => {
    it("take the next resourceVersion; creations get a UID an object keeps across updates", () => {
      const lw = new InMemoryListerWatcher<Widget>();
      const start = Number(lw.resourceVersion);
      const a = lw.put(widget("a"));
      assert.equal(a.metadata.resourceVersion, String(start + 1));
      assert.match(a.metadata.uid ?? "", /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/);
      const a2 = lw.put(widget("a", 1));
      assert.equal(a2.metadata.uid, a.metadata.uid, "the UID is immutable");
      assert.equal(a2.metadata.resourceVersion, String(start + 2));
      const own = lw.create({ ...widget("b"), metadata: { ...widget("b").metadata, uid: "my-uid" } });
      assert.equal(own.metadata.uid, "my-uid", "a UID sent on creation is kept");
      assert.equal(lw.resourceVersion, String(start + 3));
      assert.equal(lw.size, 2);
      assert.deepEqual(lw.get("default/a"), a2);
    });

    it("create refuses an existing key, update a missing one or a stale resourceVersion; delete of nothing is a no-op", () => {
      const lw = new InMemoryListerWatcher<Widget>();
      const a = lw.create(widget("a"));
      assert.throws(() => lw.create(widget("a")), /already exists/);
      assert.throws(() => lw.update(widget("nope")), /not found/);
      const a2 = lw.update({ ...a, spec: { size: 2 } });
      assert.equal(a2.spec?.size, 2);
      assert.throws(() => lw.update({ ...a, spec: { size: 3 } }), /conflict/);
      const rv = lw.resourceVersion;
      assert.equal(lw.delete("default/nope"), undefined);
      assert.equal(lw.resourceVersion, rv);
      const gone = lw.delete("default/a");
      assert.equal(gone?.metadata.resourceVersion, String(Number(rv) + 1));
      assert.equal(lw.size, 0);
    });

    it("keeps copies: what a caller or a handler does to an object does not change the collection", async () => {
      const lw = new InMemoryListerWatcher<Widget>();
      const sent = widget("a");
      const stored = lw.put(sent);
      sent.spec = { size: 9 };
      stored.spec = { size: 8 };
      const w = watching(lw, { sendInitialEvents: true, allowWatchBookmarks: true });
      await settle(() => w.events.length === 2);
      (w.events[0]?.object as Widget).spec = { size: 7 };
      const [listed] = (await lw.list({})).items;
      assert.equal(listed?.spec?.size, 0);
      assert.equal(lw.snapshot().get("default/a")?.spec?.size, 0);
      w.stop.abort();
      await w.done;
    });
  });

  describe("LIST", () => {
    it("pages by limit with continue tokens, every page at the first page's resourceVersion", async () => {
      const lw = new InMemoryListerWatcher<Widget>();
      for (const name of ["c", "a", "e", "b", "d"]) lw.put(widget(name));
      const first = await lw.list({ limit: 2 });
      assert.deepEqual(
        first.items.map((o) => o.metadata.name),
        ["a", "b"],
        "in key order",
      );
      assert.equal(first.metadata?.remainingItemCount, 3);
      const rv = first.metadata?.resourceVersion;
      lw.put(widget("aa"));
      lw.delete("default/e");
      const second = await lw.list({ limit: 2, continue: first.metadata?.continue });
      assert.deepEqual(
        second.items.map((o) => o.metadata.name),
        ["c", "d"],
      );
      assert.equal(second.metadata?.resourceVersion, rv);
      const third = await lw.list({ limit: 2, continue: second.metadata?.continue });
      assert.deepEqual(
        third.items.map((o) => o.metadata.name),
        ["e"],
      );
      assert.equal(third.metadata?.continue, undefined);
      assert.equal(lw.lists, 3);
    });

    it("answers 410 Expired for a continue token older than a compaction; the pager then lists whole", async () => {
      const lw = new InMemoryListerWatcher<Widget>();
      for (let i = 0; i < 5; i++) lw.put(widget(`w-${i}`));
      const first = await lw.list({ limit: 2 });
      lw.expire();
      await assert.rejects(lw.list({ limit: 2, continue: first.metadata?.continue }), (err) => {
        assert.ok(isResourceExpired(err));
        assert.ok(err instanceof ApiStatusError && err.source === "response" && err.verb === "list");
        return true;
      });
      const paged = await listAllPages(lw, { resourceVersion: "0" }, 2);
      assert.equal(paged.items.length, 5);
    });

    it("serves resourceVersionMatch Exact from the history, silent changes included; 410 before a compaction, 504 past now", async () => {
      const lw = new InMemoryListerWatcher<Widget>();
      lw.put(widget("a"));
      lw.put(widget("b"));
      const rv = lw.resourceVersion;
      lw.put(widget("a", 5));
      lw.delete("default/b", { silent: true });
      lw.put(widget("c"), { silent: true });
      const then = await lw.list({ resourceVersion: rv, resourceVersionMatch: "Exact" });
      assert.equal(then.metadata?.resourceVersion, rv);
      assert.deepEqual(
        then.items.map((o) => [o.metadata.name, o.spec?.size]),
        [
          ["a", 0],
          ["b", 0],
        ],
      );
      const now = await lw.list({ resourceVersion: rv, resourceVersionMatch: "NotOlderThan" });
      assert.equal(now.metadata?.resourceVersion, lw.resourceVersion);
      assert.deepEqual(
        now.items.map((o) => o.metadata.name),
        ["a", "c"],
      );
      await assert.rejects(
        lw.list({ resourceVersion: String(Number(lw.resourceVersion) + 1) }),
        (err) => err instanceof ApiStatusError && err.code === 504,
      );
      lw.expire();
      await assert.rejects(
        lw.list({ resourceVersion: rv, resourceVersionMatch: "Exact" }),
        isResourceExpired,
      );
    });
  });

  describe("WATCH", () => {
    it("watch-list: the current objects as ADDED, the initial-events-end bookmark, then live events", async () => {
      const lw = new InMemoryListerWatcher<Widget>();
      lw.put(widget("a"));
      lw.put(widget("b"));
      const w = watching(lw, { sendInitialEvents: true, allowWatchBookmarks: true, resourceVersion: "" });
      assert.equal(w.events.length, 0, "nothing is delivered in the call itself");
      await settle(() => w.events.length === 3);
      assert.deepEqual(w.seen(), ["ADDED a@2", "ADDED b@3", "BOOKMARK @3"]);
      assert.equal(w.events[2]?.object.metadata.annotations?.[INITIAL_EVENTS_END_ANNOTATION], "true");
      lw.put(widget("a", 1));
      lw.delete("default/b");
      lw.bookmark();
      assert.deepEqual(w.seen().slice(3), ["MODIFIED a@4", "DELETED b@5", "BOOKMARK @5"]);
      assert.equal(lw.openWatches, 1);
      w.stop.abort();
      await w.done;
      assert.equal((w.outcome() as Error).name, "AbortError");
      assert.equal(lw.openWatches, 0);
    });

    it("from a resourceVersion: replays the changes after it (silent ones not), then live; no bookmarks unless allowed", async () => {
      const lw = new InMemoryListerWatcher<Widget>();
      lw.put(widget("a"));
      const rv = lw.resourceVersion;
      lw.put(widget("b"));
      lw.put(widget("a", 1));
      lw.put(widget("hidden"), { silent: true });
      const w = watching(lw, { resourceVersion: rv });
      await settle(() => lw.openWatches === 1);
      lw.delete("default/a");
      lw.bookmark();
      assert.deepEqual(w.seen(), ["ADDED b@3", "MODIFIED a@4", "DELETED a@6"]);
      lw.endWatches();
      await w.done;
      assert.equal(w.outcome(), "ended");
    });

    it("without a resourceVersion: starts with the current objects as ADDED events", async () => {
      const lw = new InMemoryListerWatcher<Widget>();
      lw.put(widget("a"));
      const w = watching(lw, {});
      await settle(() => lw.openWatches === 1);
      lw.put(widget("b"));
      assert.deepEqual(w.seen(), ["ADDED a@2", "ADDED b@3"]);
      w.stop.abort();
      await w.done;
    });

    it("expire: open watches end with a 410 ERROR event, and resuming from before it fails the same way", async () => {
      const lw = new InMemoryListerWatcher<Widget>();
      lw.put(widget("a"));
      const rv = lw.resourceVersion;
      const hit = watching(lw, { resourceVersion: rv, labelSelector: "x" });
      const spared = watching(lw, { resourceVersion: rv, labelSelector: "y" });
      await settle(() => lw.openWatches === 2);
      lw.put(widget("b"));
      lw.expire((options) => options.labelSelector === "x");
      await hit.done;
      const err = hit.outcome();
      assert.ok(err instanceof ApiStatusError && err.source === "event" && isResourceExpired(err));
      assert.equal(spared.outcome(), "open");
      const late = watching(lw, { resourceVersion: rv });
      await late.done;
      assert.ok(isResourceExpired(late.outcome()));
      const fromNow = watching(lw, { resourceVersion: lw.resourceVersion });
      await settle(() => lw.openWatches === 2);
      lw.failWatches(new Error("connection reset"));
      await Promise.all([spared.done, fromNow.done]);
      assert.equal((fromNow.outcome() as Error).message, "connection reset");
      assert.equal(lw.watches, 4);
    });

    it("a handler that throws closes the watch, which rejects with what it threw", async () => {
      const lw = new InMemoryListerWatcher<Widget>();
      lw.put(widget("a"));
      const done = lw.watch({ sendInitialEvents: true }, () => {
        throw new Error("handler broke");
      });
      await assert.rejects(done, /handler broke/);
      assert.equal(lw.openWatches, 0);
    });
  });

  describe("selection, namespace, holding", () => {
    it("select: lists and watches only what matches; objects entering are ADDED, leaving DELETED; shardInfo is echoed", async () => {
      const lw = new InMemoryListerWatcher<Widget>({
        select: (options) => {
          const s = byTier(options);
          return s && { ...s, shardInfo: { selector: options.labelSelector } };
        },
      });
      lw.put(widget("a", 0, "default", { tier: "web" }));
      lw.put(widget("b", 0, "default", { tier: "db" }));
      const list = await lw.list({ labelSelector: "tier=web" });
      assert.deepEqual(
        list.items.map((o) => o.metadata.name),
        ["a"],
      );
      assert.deepEqual(list.metadata?.shardInfo, { selector: "tier=web" });
      assert.equal((await lw.list({})).items.length, 2, "no selector: everything");
      assert.equal((await lw.list({})).metadata?.shardInfo, undefined);
      const w = watching(lw, { resourceVersion: lw.resourceVersion, labelSelector: "tier=web" });
      await settle(() => lw.openWatches === 1);
      lw.put(widget("b", 1, "default", { tier: "web" }));
      lw.put(widget("a", 1, "default", { tier: "db" }));
      lw.put(widget("a", 2, "default", { tier: "db" }));
      lw.delete("default/b");
      assert.deepEqual(w.seen(), ["ADDED b@4", "DELETED a@5", "DELETED b@7"]);
      assert.equal(w.events[1]?.object.metadata.labels?.["tier"], "web", "the last state that matched");
      w.stop.abort();
      await w.done;
    });

    it("namespace: serves only that namespace's objects and names it in errors", async () => {
      const lw = new InMemoryListerWatcher<Widget>({ resource: "widgets.example.com", namespace: "a" });
      lw.put(widget("x", 0, "a"));
      lw.put(widget("y", 0, "b"));
      assert.deepEqual(
        (await lw.list({})).items.map((o) => o.metadata.name),
        ["x"],
      );
      assert.equal(lw.snapshot().size, 2, "the snapshot is the whole collection");
      await assert.rejects(
        lw.list({ resourceVersion: "999" }),
        (err) =>
          err instanceof ApiStatusError && err.namespace === "a" && err.resource === "widgets.example.com",
      );
    });

    it("pause holds new requests and records them; resume answers them as of then", async () => {
      const lw = new InMemoryListerWatcher<Widget>();
      lw.put(widget("a"));
      lw.pause();
      let listed: string[] | undefined;
      void lw.list({}).then((l) => (listed = l.items.map((o) => o.metadata.name)));
      const w = watching(lw, { sendInitialEvents: true, allowWatchBookmarks: true });
      await settle(undefined, 10);
      assert.equal(listed, undefined);
      assert.equal(w.events.length, 0);
      assert.deepEqual(
        lw.requests.map((r) => r.verb),
        ["list", "watch"],
      );
      lw.put(widget("b"));
      lw.resume();
      await settle(() => listed !== undefined && w.events.length === 3);
      assert.deepEqual(listed, ["a", "b"]);
      assert.deepEqual(w.seen(), ["ADDED a@2", "ADDED b@3", "BOOKMARK @3"]);
      w.stop.abort();
      await w.done;
    });
  });

  it("a Reflector syncs from it and follows it", async () => {
    const lw = new InMemoryListerWatcher<Widget>();
    for (let i = 0; i < 10; i++) lw.put(widget(`w-${i}`));
    const store = new IndexedStore<Widget>();
    const stop = new AbortController();
    const running = new Reflector<Widget>({ listerWatcher: lw, store }).run(stop.signal);
    await settle(() => store.list().length === 10, 2_000);
    lw.delete("default/w-0");
    lw.put(widget("w-1", 1));
    await settle(() => store.list().length === 9, 2_000);
    assert.deepEqual(
      store
        .list()
        .map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`)
        .sort(),
      Array.from(lw.snapshot().values())
        .map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`)
        .sort(),
    );
    stop.abort();
    await running.catch(() => undefined);
  });
});
