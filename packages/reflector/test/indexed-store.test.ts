import { strict as assert } from "node:assert";
import fc from "fast-check";
import {
  DeletedFinalStateUnknown,
  IndexedStore,
  IndexerError,
  indexByNamespace,
  NAMESPACE_INDEX,
  ObjectKeyError,
} from "../src/index.js";
import { cm, type TestObject } from "./support/objects.js";

const byLabel = (o: TestObject) => (o.data?.team ? [o.data.team] : []);

describe("IndexedStore", () => {
  it("keys objects namespace/name (name alone when cluster-scoped)", () => {
    const s = new IndexedStore<TestObject>();
    s.add(cm("a", "1", {}, "ns1"));
    s.add({ metadata: { name: "node-1", resourceVersion: "2" } });
    assert.deepEqual(s.listKeys().sort(), ["node-1", "ns1/a"]);
    assert.throws(() => s.add({ metadata: {} }), ObjectKeyError);
  });

  it("maintains named indices across add, update, delete and tombstone delete", () => {
    const s = new IndexedStore<TestObject>({
      indexers: { [NAMESPACE_INDEX]: indexByNamespace, team: byLabel },
    });
    s.add(cm("a", "1", { team: "red" }, "ns1"));
    s.add(cm("b", "1", { team: "red" }, "ns2"));
    s.update(cm("a", "2", { team: "blue" }, "ns1"));
    assert.deepEqual(s.indexKeys("team", "red"), ["ns2/b"]);
    assert.deepEqual(
      s.byIndex("team", "blue").map((o) => o.metadata?.resourceVersion),
      ["2"],
    );
    assert.deepEqual(s.listIndexFuncValues(NAMESPACE_INDEX).sort(), ["ns1", "ns2"]);
    assert.deepEqual(
      s.index("team", cm("x", "1", { team: "red" })).map((o) => o.metadata?.name),
      ["b"],
    );
    s.delete(new DeletedFinalStateUnknown("ns2/b", cm("b", "1", { team: "red" }, "ns2")));
    assert.deepEqual(s.listIndexFuncValues("team"), ["blue"], "empty index values are dropped");
    assert.throws(() => s.byIndex("nope", "x"), IndexerError);
  });

  it("stores by a key given (setByKey) as add and update do, indexes included", () => {
    const byAdd = new IndexedStore<TestObject>({
      indexers: { [NAMESPACE_INDEX]: indexByNamespace, team: byLabel },
    });
    const byKey = new IndexedStore<TestObject>({
      indexers: { [NAMESPACE_INDEX]: indexByNamespace, team: byLabel },
    });
    byAdd.add(cm("a", "1", { team: "red" }, "ns1"));
    byKey.setByKey("ns1/a", cm("a", "1", { team: "red" }, "ns1"));
    byAdd.add(cm("b", "1", { team: "red" }, "ns2"));
    byKey.setByKey("ns2/b", cm("b", "1", { team: "red" }, "ns2"));
    byAdd.update(cm("a", "2", { team: "blue" }, "ns1"));
    byKey.setByKey("ns1/a", cm("a", "2", { team: "blue" }, "ns1"));
    for (const s of [byAdd, byKey]) {
      assert.deepEqual(s.listKeys().sort(), ["ns1/a", "ns2/b"]);
      assert.equal(s.getByKey("ns1/a")?.metadata?.resourceVersion, "2");
      assert.deepEqual(s.indexKeys("team", "red"), ["ns2/b"]);
      assert.deepEqual(s.indexKeys("team", "blue"), ["ns1/a"]);
      assert.deepEqual(s.listIndexFuncValues(NAMESPACE_INDEX).sort(), ["ns1", "ns2"]);
    }
    byKey.delete(cm("b", "1", { team: "red" }, "ns2"));
    assert.deepEqual(byKey.listIndexFuncValues("team"), ["blue"]);
  });

  it("replaces its whole content and indices at once", () => {
    const s = new IndexedStore<TestObject>({ indexers: { team: byLabel } });
    s.add(cm("a", "1", { team: "red" }));
    s.replace([cm("b", "5", { team: "blue" })], "5");
    assert.deepEqual(s.listKeys(), ["default/b"]);
    assert.deepEqual(s.listIndexFuncValues("team"), ["blue"]);
  });

  it("indexes existing objects when an index is added later, and refuses a duplicate name", () => {
    const s = new IndexedStore<TestObject>();
    s.add(cm("a", "1", { team: "red" }));
    s.addIndexers({ team: byLabel });
    assert.deepEqual(s.indexKeys("team", "red"), ["default/a"]);
    assert.throws(() => s.addIndexers({ team: byLabel }), IndexerError);
  });

  it("property: indices always agree with a recomputation from the objects", () => {
    const op = fc.record({
      op: fc.constantFrom("put", "delete", "replace"),
      name: fc.constantFrom("a", "b", "c", "d"),
      team: fc.constantFrom("red", "blue", ""),
      ns: fc.constantFrom("x", "y"),
    });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const s = new IndexedStore<TestObject>({
          indexers: { team: byLabel, [NAMESPACE_INDEX]: indexByNamespace },
        });
        for (const o of ops) {
          const obj = cm(o.name, "1", o.team ? { team: o.team } : {}, o.ns);
          if (o.op === "put") s.update(obj);
          else if (o.op === "delete") s.delete(obj);
          else s.replace([obj], "1");
        }
        for (const [index, fn] of [
          ["team", byLabel],
          [NAMESPACE_INDEX, indexByNamespace],
        ] as const) {
          const expected = new Map<string, string[]>();
          for (const key of s.listKeys()) {
            for (const v of fn(s.getByKey(key) as TestObject))
              expected.set(v, [...(expected.get(v) ?? []), key]);
          }
          assert.deepEqual(new Set(s.listIndexFuncValues(index)), new Set(expected.keys()));
          for (const [v, keys] of expected) assert.deepEqual(s.indexKeys(index, v).sort(), keys.sort());
        }
      }),
    );
  });
});
