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

  describe("beginReplace (a staged replace)", () => {
    it("shows the old content and indexes until commit, then the staged ones at once", () => {
      const s = new IndexedStore<TestObject>({ indexers: { team: byLabel } });
      s.add(cm("a", "1", { team: "red" }));
      const staged = s.beginReplace();
      staged.add(cm("b", "5", { team: "blue" }));
      staged.add(cm("c", "6", { team: "blue" }));
      assert.deepEqual(s.listKeys(), ["default/a"], "nothing staged is visible");
      assert.deepEqual(s.listIndexFuncValues("team"), ["red"]);
      assert.equal(staged.size, 2);
      staged.commit("6");
      assert.deepEqual(s.listKeys(), ["default/b", "default/c"]);
      assert.deepEqual(s.listIndexFuncValues("team"), ["blue"]);
      assert.deepEqual(s.indexKeys("team", "blue"), ["default/b", "default/c"]);
      assert.deepEqual(
        Array.from(staged.entries(), ([key]) => key),
        ["default/b", "default/c"],
        "what was staged can still be walked after the commit",
      );
      assert.throws(() => staged.add(cm("d", "7")), /committed already/);
      assert.throws(() => staged.commit("7"), /committed already/);
    });

    it("leaves the store as it was on abort, and takes nothing after", () => {
      const s = new IndexedStore<TestObject>({ indexers: { team: byLabel } });
      s.add(cm("a", "1", { team: "red" }));
      const staged = s.beginReplace();
      staged.add(cm("b", "5", { team: "blue" }));
      staged.abort();
      assert.deepEqual(s.listKeys(), ["default/a"]);
      assert.deepEqual(s.indexKeys("team", "red"), ["default/a"]);
      assert.deepEqual(s.listIndexFuncValues("team"), ["red"]);
      assert.throws(() => staged.add(cm("c", "6")), /aborted already/);
      assert.throws(() => staged.commit("6"), /aborted already/);
      staged.abort();
    });

    it("keeps a key added twice at its first place with the later object, its indexes following", () => {
      const s = new IndexedStore<TestObject>({ indexers: { team: byLabel } });
      const staged = s.beginReplace();
      staged.add(cm("a", "1", { team: "red" }));
      staged.add(cm("b", "2", { team: "red" }));
      staged.add(cm("a", "3", { team: "blue" }));
      staged.commit("3");
      assert.deepEqual(s.listKeys(), ["default/a", "default/b"]);
      assert.equal(s.getByKey("default/a")?.metadata?.resourceVersion, "3");
      assert.deepEqual(s.indexKeys("team", "red"), ["default/b"]);
      assert.deepEqual(s.indexKeys("team", "blue"), ["default/a"]);
    });

    it("files the objects under an index function added while staging", () => {
      const s = new IndexedStore<TestObject>({ keyFunc: (o) => `k-${o.metadata?.name ?? ""}` });
      const staged = s.beginReplace();
      staged.add(cm("a", "1", { team: "red" }));
      s.addIndexers({ team: byLabel });
      staged.add(cm("b", "2", { team: "red" }));
      staged.commit("2");
      assert.deepEqual(s.listKeys(), ["k-a", "k-b"], "keyed by the store's key function");
      assert.deepEqual(s.indexKeys("team", "red"), ["k-a", "k-b"]);
    });

    it("property: commit gives what replace with the same objects gives", () => {
      const item = fc.record({
        name: fc.constantFrom("a", "b", "c", "d"),
        team: fc.constantFrom("red", "blue", ""),
        ns: fc.constantFrom("x", "y"),
        rv: fc.nat(99),
      });
      fc.assert(
        fc.property(fc.array(item, { maxLength: 8 }), fc.array(item, { maxLength: 12 }), (before, after) => {
          const make = () => {
            const s = new IndexedStore<TestObject>({
              indexers: { team: byLabel, [NAMESPACE_INDEX]: indexByNamespace },
            });
            for (const o of before) s.update(cm(o.name, "1", o.team ? { team: o.team } : {}, o.ns));
            return s;
          };
          const objects = after.map((o) => cm(o.name, String(o.rv), o.team ? { team: o.team } : {}, o.ns));
          const replaced = make();
          replaced.replace(objects, "100");
          const staged = make();
          const replace = staged.beginReplace();
          for (const obj of objects) replace.add(obj);
          replace.commit("100");
          assert.deepEqual(staged.listKeys(), replaced.listKeys());
          assert.deepEqual(staged.list(), replaced.list());
          // The same values and keys in each index (their order within an index is no contract).
          for (const index of ["team", NAMESPACE_INDEX]) {
            const values = replaced.listIndexFuncValues(index).sort();
            assert.deepEqual(staged.listIndexFuncValues(index).sort(), values);
            for (const v of values)
              assert.deepEqual(staged.indexKeys(index, v).sort(), replaced.indexKeys(index, v).sort());
          }
        }),
      );
    });
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
