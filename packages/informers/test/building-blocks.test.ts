import { strict as assert } from "node:assert";
import { IndexedStore, indexByNamespace, NAMESPACE_INDEX } from "@tessera/reflector";
import { LabelSelectorError, type KubeObject } from "@tessera/client";
import {
  composeTransforms,
  indexByControllerUid,
  indexByLabel,
  indexByOwnerUid,
  Lister,
  stripLastAppliedConfiguration,
  stripManagedFields,
} from "../src/index.js";
import { UnboundedQueue } from "../src/unbounded-queue.js";
import { seededRandom } from "./seeded-random.js";

interface Obj extends KubeObject {
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    managedFields?: unknown[];
    ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }[];
  };
  data?: Record<string, string>;
}

describe("UnboundedQueue", () => {
  it("hands items out in the order they went in, across growth and wrap-around", () => {
    const q = new UnboundedQueue<number>();
    const model: number[] = [];
    const random = seededRandom(5);
    let next = 0;
    for (let step = 0; step < 20_000; step++) {
      if (random() < 0.55) {
        q.push(next);
        model.push(next++);
      } else {
        assert.equal(q.shift(), model.shift());
      }
      assert.equal(q.length, model.length);
    }
    while (model.length > 0) assert.equal(q.shift(), model.shift());
    assert.equal(q.shift(), undefined);
    q.push(1);
    q.clear();
    assert.equal(q.length, 0);
    assert.equal(q.shift(), undefined);
  });

  it("lets go of a ring grown by a burst once drained, and keeps a small one", () => {
    const q = new UnboundedQueue<number>();
    for (let i = 0; i < 10_000; i++) q.push(i);
    assert.ok(q.capacity >= 10_000);
    for (let i = 0; i < 9_999; i++) q.shift();
    assert.ok(q.capacity >= 10_000, "not while it holds an item");
    assert.equal(q.shift(), 9_999);
    assert.equal(q.capacity, 16);
    for (let i = 0; i < 1_000; i++) q.push(i);
    for (let i = 0; i < 1_000; i++) assert.equal(q.shift(), i);
    assert.equal(q.capacity, 1_024, "a ring of up to 1,024 slots is kept");
  });
});

describe("transforms", () => {
  const obj: Obj = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: "a",
      namespace: "ns",
      uid: "u1",
      resourceVersion: "7",
      managedFields: [{ manager: "kubectl" }],
      annotations: { "kubectl.kubernetes.io/last-applied-configuration": "{...}", keep: "me" },
    },
    data: { k: "v" },
  };

  it("strips managedFields and keeps everything else", () => {
    const out = stripManagedFields(obj);
    assert.equal(out.metadata.managedFields, undefined);
    assert.ok(!("managedFields" in out.metadata));
    assert.deepEqual(out.metadata, {
      name: "a",
      namespace: "ns",
      uid: "u1",
      resourceVersion: "7",
      annotations: obj.metadata.annotations,
    });
    assert.deepEqual(out.data, { k: "v" });
    const bare: Obj = { metadata: { name: "b" } };
    assert.equal(stripManagedFields(bare), bare, "nothing to strip: the same object");
  });

  it("strips the last-applied annotation, and composes left to right", () => {
    const both = composeTransforms<Obj>(stripManagedFields, stripLastAppliedConfiguration);
    const out = both(obj);
    assert.deepEqual(out.metadata.annotations, { keep: "me" });
    assert.equal(out.metadata.managedFields, undefined);
    assert.equal(composeTransforms<Obj>(stripManagedFields), stripManagedFields);
  });
});

describe("Lister and index functions", () => {
  const owner = (uid: string, controller?: boolean) => ({
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    name: uid,
    uid,
    ...(controller === undefined ? {} : { controller }),
  });
  const objects: Obj[] = [
    {
      metadata: {
        name: "p1",
        namespace: "a",
        labels: { app: "web", tier: "front" },
        ownerReferences: [owner("rs1", true)],
      },
    },
    {
      metadata: {
        name: "p2",
        namespace: "a",
        labels: { app: "web" },
        ownerReferences: [owner("rs1"), owner("rs2", true)],
      },
    },
    { metadata: { name: "p3", namespace: "b", labels: { app: "db" } } },
    { metadata: { name: "node-1" } },
  ];
  const store = new IndexedStore<Obj>({
    indexers: {
      [NAMESPACE_INDEX]: indexByNamespace,
      app: indexByLabel("app"),
      owner: indexByOwnerUid,
      controller: indexByControllerUid,
    },
  });
  store.replace(objects, "1");
  const lister = new Lister(store);
  const names = (list: Obj[]): string[] => list.map((o) => o.metadata.name).sort();

  it("gets by name and namespace, or by key", () => {
    assert.equal(lister.get("p1", "a")?.metadata.name, "p1");
    assert.equal(lister.get("p1", "b"), undefined);
    assert.equal(lister.get("node-1")?.metadata.name, "node-1");
    assert.equal(lister.getByKey("b/p3")?.metadata.name, "p3");
    assert.equal(lister.size, 4);
  });

  it("lists all, by matchLabels, by predicate, by namespace and by index", () => {
    assert.deepEqual(names(lister.list()), ["node-1", "p1", "p2", "p3"]);
    assert.deepEqual(names(lister.list({ app: "web", tier: "front" })), ["p1"]);
    assert.deepEqual(names(lister.list({})), ["node-1", "p1", "p2", "p3"], "an empty selector matches all");
    assert.deepEqual(names(lister.list((o) => o.metadata.name.endsWith("3"))), ["p3"]);
    assert.deepEqual(names(lister.namespace("a").list()), ["p1", "p2"]);
    assert.deepEqual(names(lister.namespace("a").list({ tier: "front" })), ["p1"]);
    assert.equal(lister.namespace("b").get("p3")?.metadata.name, "p3");
    assert.equal(lister.namespace("a").get("p3"), undefined);
    assert.deepEqual(names(lister.byIndex("app", "web")), ["p1", "p2"]);
    assert.deepEqual(names(lister.byIndex("owner", "rs1")), ["p1", "p2"]);
    assert.deepEqual(names(lister.byIndex("controller", "rs1")), ["p1"]);
    assert.deepEqual(names(lister.byIndex("controller", "rs2")), ["p2"]);
    assert.deepEqual(lister.indexKeys("app", "db"), ["b/p3"]);
  });

  it("lists by a selector string in the API server's grammar, through @tessera/client's matcher", () => {
    assert.deepEqual(names(lister.list("app in(web),tier!=front")), ["p2"]);
    assert.deepEqual(names(lister.list("!app")), ["node-1"], "an object without labels has none of them");
    assert.deepEqual(names(lister.namespace("a").list("tier")), ["p1"]);
    assert.deepEqual(names(lister.byIndex("app", "web", "!tier")), ["p2"]);
    assert.deepEqual(names(lister.list("")), ["node-1", "p1", "p2", "p3"], "an empty selector matches all");
    assert.throws(() => lister.list("app=web,"), LabelSelectorError);
    assert.throws(() => lister.list({ "bad key": "x" }), LabelSelectorError);
  });

  it("lists a namespace without a namespace index by scanning", () => {
    const plain = new IndexedStore<Obj>();
    plain.replace(objects, "1");
    const l = new Lister(plain);
    assert.deepEqual(names(l.namespace("a").list()), ["p1", "p2"]);
    assert.deepEqual(names(l.namespace("").list()), ["node-1"]);
  });
});
