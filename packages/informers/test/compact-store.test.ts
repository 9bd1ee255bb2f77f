import { strict as assert } from "node:assert";
import type { KubeObject } from "@tessera/client";
import {
  DeletedFinalStateUnknown,
  IndexedStore,
  IndexerError,
  indexByNamespace,
  metaNamespaceKey,
  NAMESPACE_INDEX,
  type Indexer,
  type Indexers,
} from "@tessera/reflector";
import { CompactStore, indexByLabel, indexByOwnerUid, Lister } from "../src/index.js";
import { seededRandom } from "./seeded-random.js";

interface Thing extends KubeObject {
  metadata: {
    name: string;
    namespace?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }[];
  };
  data?: Record<string, string>;
}

const byKey = (a: KubeObject, b: KubeObject) => metaNamespaceKey(a).localeCompare(metaNamespaceKey(b));
const sorted = (xs: readonly string[]) => [...xs].sort();
const sortedObjects = (xs: readonly KubeObject[]) => [...xs].sort(byKey);

function thing(random: () => number, rv: number): Thing {
  const pick = <X>(xs: readonly X[]): X => xs[Math.floor(random() * xs.length)] as X;
  const name = `t-${Math.floor(random() * 40)}`;
  const namespace = pick(["a", "b", "", "c"]);
  const labels = random() < 0.2 ? undefined : { app: pick(["web", "db", "cache"]), tier: pick(["x", "y"]) };
  const owners = Array.from({ length: Math.floor(random() * 3) }, (_, i) => ({
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    name: `rs-${i}`,
    uid: `uid-${Math.floor(random() * 5)}`,
    ...(i === 0 ? { controller: true } : {}),
  }));
  return {
    apiVersion: "v1",
    kind: "Thing",
    metadata: {
      name,
      ...(namespace ? { namespace } : {}),
      resourceVersion: String(rv),
      ...(labels ? { labels } : {}),
      ...(owners.length ? { ownerReferences: owners } : {}),
    },
    data: { text: 'é€😀 \u0000 "quoted"', n: String(random()) },
  };
}

/** Every read of the store interface, as comparable values. */
function readAll(store: Indexer<Thing>, keys: readonly string[], indexNames: readonly string[]): unknown {
  const lister = new Lister(store);
  return {
    size: store.size,
    keys: sorted(store.listKeys()),
    list: sortedObjects(store.list()),
    get: keys.map((k) => [k, store.has(k), store.getByKey(k)]),
    indexes: indexNames.map((name) => ({
      name,
      values: sorted(store.listIndexFuncValues(name)).map((v) => [
        v,
        sorted(store.indexKeys(name, v)),
        sortedObjects(store.byIndex(name, v)),
      ]),
    })),
    lister: {
      web: sortedObjects(lister.list({ app: "web" })),
      notDb: sortedObjects(lister.list("app!=db")),
      nsA: sortedObjects(lister.namespace("a").list({ tier: "x" })),
      byOwner:
        "owner" in store.getIndexers() ? sortedObjects(lister.byIndex("owner", "uid-1", "tier in (y)")) : [],
      predicate: sortedObjects(lister.list((o) => o.metadata.name < "t-2")),
    },
  };
}

describe("CompactStore", () => {
  const indexers: Indexers<Thing> = {
    [NAMESPACE_INDEX]: indexByNamespace,
    app: indexByLabel<Thing>("app"),
    owner: indexByOwnerUid,
  };

  // Several indexes from the start, or one (kept without an array per object) and then a second.
  const namespaceOnly: Indexers<Thing> = { [NAMESPACE_INDEX]: indexByNamespace };
  for (const [hotObjects, initial, encoding] of [
    [0, indexers, "json"],
    [1, namespaceOnly, "json"],
    [7, indexers, "json"],
    [256, namespaceOnly, "json"],
    [0, indexers, "deflate"],
    [7, namespaceOnly, "deflate"],
  ] as const) {
    const label = Object.keys(initial).join(", ");
    it(`behaves as IndexedStore through random operations (${encoding}, hotObjects ${hotObjects}, indexes ${label})`, () => {
      const random = seededRandom(1000 + hotObjects);
      const plain = new IndexedStore<Thing>({ indexers: initial });
      const compact = new CompactStore<Thing>({ indexers: initial, hotObjects, encoding });
      const names = Object.keys(initial);
      const keys = [...["a", "b", "c"].flatMap((ns) => [0, 1, 2].map((i) => `${ns}/t-${i}`)), "t-0", "t-1"];
      let rv = 0;
      for (let op = 0; op < 3_000; op++) {
        const roll = random();
        if (roll < 0.35) {
          const obj = thing(random, ++rv);
          plain.add(obj);
          // Every other write by the key the caller has (an informer's batch key): the same as add.
          if (op % 2 === 0) compact.add(structuredClone(obj));
          else compact.setByKey(metaNamespaceKey(obj), structuredClone(obj));
        } else if (roll < 0.65) {
          const obj = thing(random, ++rv);
          plain.update(obj);
          if (op % 2 === 0) compact.update(structuredClone(obj));
          else compact.setByKey(metaNamespaceKey(obj), structuredClone(obj));
        } else if (roll < 0.8) {
          const obj = thing(random, ++rv);
          plain.delete(obj);
          compact.delete(structuredClone(obj));
        } else if (roll < 0.88) {
          const held = plain.listKeys();
          const key = held[Math.floor(random() * held.length)];
          if (key !== undefined) {
            const last = plain.getByKey(key) as Thing;
            plain.delete(new DeletedFinalStateUnknown(key, last));
            compact.delete(new DeletedFinalStateUnknown(key, structuredClone(last)));
          }
        } else if (roll < 0.9) {
          const items = Array.from({ length: Math.floor(random() * 30) }, () => thing(random, ++rv));
          plain.replace(items, String(rv));
          compact.replace(structuredClone(items), String(rv));
        } else {
          // Reads move objects in and out of the hot set: compare them on the way.
          const key = keys[Math.floor(random() * keys.length)] as string;
          assert.deepEqual(compact.getByKey(key), plain.getByKey(key), `getByKey ${key} at op ${op}`);
        }
        if (op % 50 === 0 || op === 2_999) {
          assert.deepEqual(readAll(compact, keys, names), readAll(plain, keys, names), `after op ${op}`);
        }
        if (op === 1_500) {
          const late: Indexers<Thing> = { tier: indexByLabel<Thing>("tier") };
          plain.addIndexers(late);
          compact.addIndexers(late);
          names.push("tier");
          assert.throws(() => compact.addIndexers(late), IndexerError);
        }
      }
      for (const key of plain.listKeys()) {
        assert.equal(
          compact.metadataOf(key)?.resourceVersion,
          plain.getByKey(key)?.metadata.resourceVersion,
          `the resourceVersion of ${key}, read without decoding`,
        );
      }
      assert.throws(() => compact.byIndex("nope", "x"), IndexerError);
    });
  }

  it("hands back the object written while it is hot, and a fresh copy once it is not", () => {
    const random = seededRandom(7);
    const store = new CompactStore<Thing>({ hotObjects: 2 });
    const first = { ...thing(random, 1), metadata: { name: "one", namespace: "a", resourceVersion: "1" } };
    store.add(first);
    assert.equal(store.getByKey("a/one"), first, "the object just written is hot");
    store.add({ ...first, metadata: { ...first.metadata, name: "two" } });
    store.add({ ...first, metadata: { ...first.metadata, name: "three" } });
    const again = store.getByKey("a/one") as Thing;
    assert.notEqual(again, first, "evicted: decoded anew");
    assert.deepEqual(again, first);
    assert.equal(store.getByKey("a/one"), again, "decoded once while it stays hot");
    (again.data as Record<string, string>).text = "changed by a reader";
    store.add({ ...first, metadata: { ...first.metadata, name: "four" } });
    store.add({ ...first, metadata: { ...first.metadata, name: "five" } });
    assert.deepEqual(store.getByKey("a/one"), first, "a change to a copy read changes nothing cached");
  });

  it("keeps labels and owner references read at write time, and refuses a bad hot size", () => {
    const store = new CompactStore<Thing>();
    const obj = thing(seededRandom(3), 9);
    store.add(obj);
    const meta = store.metadataOf(metaNamespaceKey(obj));
    assert.deepEqual(meta?.labels, obj.metadata.labels);
    assert.deepEqual(meta?.ownerReferences, obj.metadata.ownerReferences);
    assert.equal(meta?.resourceVersion, "9");
    assert.equal(store.metadataOf("nowhere/none"), undefined);
    assert.throws(() => new CompactStore({ hotObjects: -1 }), /hotObjects must be a whole number/);
    assert.throws(
      () => new CompactStore({ encoding: "cbor" as "json" }),
      /encoding must be "json" or "deflate"; got "cbor"/,
    );
  });
});
