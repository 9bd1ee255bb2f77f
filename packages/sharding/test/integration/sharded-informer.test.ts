import { strict as assert } from "node:assert";
import type { V1ConfigMap } from "@kubernetes/client-node";
import { SharedIndexInformer } from "@tessera/informers";
import { KubeListerWatcher } from "@tessera/reflector";
import { ConfigMaps } from "@tessera/client";
import { useControlPlane } from "@tessera/testenv";
import { createDequeueGuard, ShardedReflector } from "../../src/index.js";
import { SlotSpace } from "../../src/ranges.js";

// The wiring the sharding README shows and the runtime will do: a
// SharedIndexInformer whose cache is filled by a ShardedReflector through the
// informer's `source` option. It checks the two packages' contracts meet: the
// informer's sync, lister and handlers follow the member's slots.

const configMaps = ConfigMaps;
const NS = "sharded-informer";
const OBJECTS = 300;

async function eventually(what: string, done: () => boolean, limitMs = 30_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("a SharedIndexInformer fed by a ShardedReflector (its source option), on a real apiserver", function () {
  this.timeout(120_000);
  const env = useControlPlane();
  const post = async (path: string, body: object): Promise<V1ConfigMap> => {
    const res = await env.cp.raw(path, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { "content-type": "application/json" },
    });
    assert.equal(res.status, 201, res.body.slice(0, 300));
    return JSON.parse(res.body) as V1ConfigMap;
  };

  it("caches, lists and notifies exactly the member's slots as they change", async () => {
    await post("/api/v1/namespaces", { metadata: { name: NS } });
    const created: V1ConfigMap[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let i = w; i < OBJECTS; i += 8)
          created.push(await post(`/api/v1/namespaces/${NS}/configmaps`, { metadata: { name: `cm-${i}` } }));
      }),
    );

    const space = new SlotSpace(16);
    const field = "object.metadata.uid" as const;
    const namesIn = (slots: number[], objects: readonly V1ConfigMap[]) => {
      const selector = space.selectorFor(field, slots);
      return objects
        .filter((o) => selector.matchesObject(o))
        .map((o) => o.metadata!.name!)
        .sort();
    };

    const lw = new KubeListerWatcher<V1ConfigMap>(env.cp.kubeConfig, configMaps, { namespace: NS });
    let sharded: ShardedReflector<V1ConfigMap> | undefined;
    const informer = new SharedIndexInformer<V1ConfigMap>({
      listerWatcher: lw,
      source: (store) =>
        (sharded = new ShardedReflector({
          listerWatcher: lw,
          store,
          ring: "widgets",
          member: "m0",
          reflector: { consistencyCheck: true },
        })),
    });
    assert.ok(sharded, "the informer built its source");
    const added = new Set<string>();
    const deleted = new Set<string>();
    informer.addEventHandler({
      onAdd: (cm) => {
        added.add(cm.metadata!.name!);
      },
      onDelete: (cm) => {
        deleted.add(("obj" in cm ? cm.obj : cm).metadata!.name!);
      },
    });
    const stop = new AbortController();
    const running = informer.run(stop.signal);
    try {
      // Slots 0-7: half of the space.
      const first = [0, 1, 2, 3, 4, 5, 6, 7];
      await sharded.setSlots(first, space);
      await informer.waitForSync();
      const cachedNames = () =>
        informer.lister
          .list()
          .map((o) => o.metadata!.name!)
          .sort();
      assert.deepEqual(cachedNames(), namesIn(first, created), "the cache holds exactly slots 0-7");
      // Handlers are fed from their own queues, so they may trail the cache a little.
      await eventually("the handler saw slots 0-7", () => added.size >= namesIn(first, created).length);
      assert.deepEqual([...added].sort(), namesIn(first, created), "one add per object of slots 0-7");
      assert.ok(cachedNames().length > 0 && cachedNames().length < OBJECTS);

      // Give away 0-3, keep 4-7, gain 12-15.
      const second = [4, 5, 6, 7, 12, 13, 14, 15];
      await sharded.setSlots(second, space);
      await eventually("the cache follows slots 4-7 and 12-15", () => {
        const want = namesIn(second, created);
        const have = cachedNames();
        return have.length === want.length && have.every((n, i) => n === want[i]);
      });
      await eventually(
        "the handler saw the evictions",
        () => deleted.size >= namesIn([0, 1, 2, 3], created).length,
      );
      assert.deepEqual(
        [...deleted].sort(),
        namesIn([0, 1, 2, 3], created),
        "the lost slots' objects are evicted",
      );
      assert.ok(informer.hasSynced());

      // A change after the rebalance arrives only if its UID falls in the member's slots.
      const late = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          post(`/api/v1/namespaces/${NS}/configmaps`, { metadata: { name: `late-${i}` } }),
        ),
      );
      const all = [...created, ...late];
      await eventually("the late objects of slots 4-7 and 12-15 arrive", () => {
        const want = namesIn(second, all);
        const have = cachedNames();
        return have.length === want.length && have.every((n, i) => n === want[i]);
      });
      for (const name of namesIn([0, 1, 2, 3, 8, 9, 10, 11], late)) {
        assert.equal(informer.lister.get(name, NS), undefined, `${name} is outside the member's slots`);
      }
    } finally {
      stop.abort();
      await running;
    }
  });
  it("shards by namespace: whole namespaces follow the slots, and the dequeue guard agrees with the cache", async () => {
    const namespaces = Array.from({ length: 12 }, (_, i) => `by-ns-${i}`);
    const created: V1ConfigMap[] = [];
    for (const ns of namespaces) {
      await post("/api/v1/namespaces", { metadata: { name: ns } });
      for (let i = 0; i < 5; i++) {
        created.push(
          await post(`/api/v1/namespaces/${ns}/configmaps`, {
            metadata: { name: `cm-${i}`, labels: { suite: "by-ns" } },
          }),
        );
      }
    }
    const space = new SlotSpace(4);
    const field = "object.metadata.namespace" as const;
    const keysIn = (slots: number[]) => {
      const selector = space.selectorFor(field, slots);
      return created
        .filter((o) => selector.matchesObject(o))
        .map((o) => `${o.metadata!.namespace!}/${o.metadata!.name!}`)
        .sort();
    };
    // All namespaces, so the namespace is what decides the shard.
    const lw = new KubeListerWatcher<V1ConfigMap>(env.cp.kubeConfig, configMaps, {
      labelSelector: "suite=by-ns",
    });
    let sharded: ShardedReflector<V1ConfigMap> | undefined;
    const informer = new SharedIndexInformer<V1ConfigMap>({
      listerWatcher: lw,
      source: (store) =>
        (sharded = new ShardedReflector({
          listerWatcher: lw,
          store,
          field,
          reflector: { consistencyCheck: true },
        })),
    });
    assert.ok(sharded);
    let owned = new Set([0, 1]);
    const mayProcess = createDequeueGuard({ space, field, ownedSlots: () => owned });
    const cachedKeys = () =>
      informer.lister
        .list()
        .map((o) => `${o.metadata!.namespace!}/${o.metadata!.name!}`)
        .sort();
    const stop = new AbortController();
    const running = informer.run(stop.signal);
    try {
      await sharded.setSlots(owned, space);
      await informer.waitForSync();
      const first = keysIn([0, 1]);
      assert.ok(first.length > 0 && first.length < created.length, "slots 0-1 hold some namespaces, not all");
      assert.deepEqual(cachedKeys(), first);
      for (const ns of new Set(first.map((k) => k.split("/")[0]!))) {
        assert.equal(first.filter((k) => k.startsWith(`${ns}/`)).length, 5, `${ns} is cached whole`);
      }
      const outside = created
        .map((o) => `${o.metadata!.namespace!}/${o.metadata!.name!}`)
        .filter((k) => !first.includes(k));
      assert.ok(first.every(mayProcess), "the guard lets every cached key through");
      assert.ok(!outside.some(mayProcess), "the guard drops every key of a namespace outside the slots");

      owned = new Set([1, 2]);
      await sharded.setSlots(owned, space);
      const second = keysIn([1, 2]);
      await eventually("the cache follows slots 1-2", () => cachedKeys().join() === second.join());
      assert.ok(second.every(mayProcess));
      assert.ok(!keysIn([0, 3]).some(mayProcess));
      await eventually("the probe answered", () => sharded!.serverFiltering !== undefined);
      assert.equal(sharded.serverFiltering, true, "the probe found the server filtering by namespace hash");
    } finally {
      stop.abort();
      await running;
    }
  });
});
