import { strict as assert } from "node:assert";
import { DeletedFinalStateUnknown, metaNamespaceKey } from "@tessera/reflector";
import { RangeScopedStore } from "../src/range-scoped-store.js";
import { ShardLedger } from "../src/shard-ledger.js";
import type { Item } from "./item.js";
import { RecordingStore } from "./recording-store.js";

function item(name: string, uid: string, rv: number, value = "v"): Item {
  return {
    metadata: { name, namespace: "default", uid, resourceVersion: String(rv) },
    data: { value },
  };
}

function setup() {
  const store = new RecordingStore<Item>();
  const ledger = new ShardLedger<Item>(store, (o) => metaNamespaceKey(o));
  const a = new RangeScopedStore<Item>(ledger);
  const b = new RangeScopedStore<Item>(ledger);
  return { store, ledger, a, b };
}

describe("range-scoped stores over one ShardLedger", () => {
  it("a range's replace adds, updates and tombstones only its own keys; the shared replace is never called", () => {
    const { store, ledger, a, b } = setup();
    a.replace([item("a1", "u-a1", 1), item("a2", "u-a2", 2), item("a3", "u-a3", 3)], "3");
    b.replace([item("b1", "u-b1", 4), item("b2", "u-b2", 5)], "5");
    assert.equal(ledger.size, 5);
    store.take();

    a.replace([item("a1", "u-a1", 1), item("a2", "u-a2", 6, "changed"), item("a4", "u-a4", 7)], "7");
    assert.deepEqual(store.take(), [
      { op: "update", key: "default/a2", tombstone: false, uid: "u-a2" },
      { op: "add", key: "default/a4", tombstone: false, uid: "u-a4" },
      { op: "delete", key: "default/a3", tombstone: true, uid: "u-a3" },
    ]);
    assert.deepEqual(
      store.view().map(([k]) => k),
      ["default/a1", "default/a2", "default/a4", "default/b1", "default/b2"],
      "the other range's objects are untouched",
    );
    assert.equal(a.claims, 3);
    assert.equal(b.claims, 2);
    assert.equal(ledger.lastResourceVersion, "7");

    b.replace([], "8");
    assert.deepEqual(
      store.take().map((w) => `${w.op} ${w.key} ${w.tombstone}`),
      ["delete default/b1 true", "delete default/b2 true"],
    );
    assert.equal(store.replaces, 0);
    assert.equal(ledger.size, 3);
  });

  it("ignores writes once closed", () => {
    const { store, a } = setup();
    a.add(item("x", "u-x", 1));
    a.close();
    a.add(item("y", "u-y", 2));
    a.delete(item("x", "u-x", 3));
    a.replace([], "4");
    assert.deepEqual(
      store.view().map(([k]) => k),
      ["default/x"],
    );
  });

  it("a name deleted in one range and created again in another keeps the new object, whatever order the two streams deliver", () => {
    for (const order of ["new object first", "old delete first"] as const) {
      const { store, a, b } = setup();
      a.add(item("n", "old-uid", 1));
      if (order === "new object first") {
        b.add(item("n", "new-uid", 3));
        a.delete(item("n", "old-uid", 2));
      } else {
        a.delete(item("n", "old-uid", 2));
        b.add(item("n", "new-uid", 3));
      }
      assert.deepEqual(store.view(), [["default/n", "new-uid@3"]], order);
      assert.equal(a.claims, 0, order);
      assert.equal(b.claims, 1, order);
      // the consumer saw the old object go and the new one come, never an update turning one uid into another
      const ops = store.writes.map((w) => `${w.op} ${w.uid}`);
      assert.deepEqual(ops, ["add old-uid", "delete old-uid", "add new-uid"], order);
    }
  });

  it("shows the remaining claim when the range shown drops its own", () => {
    const { store, a, b } = setup();
    b.add(item("n", "b-uid", 1));
    a.add(item("n", "a-uid", 2)); // written last: shown
    a.delete(new DeletedFinalStateUnknown("default/n", item("n", "a-uid", 2)));
    assert.deepEqual(store.view(), [["default/n", "b-uid@1"]]);
    b.delete(item("n", "b-uid", 3));
    assert.deepEqual(store.view(), []);
  });

  it("release hands each claim to the range that routes it, and evicts the rest with plain deletes", () => {
    const { store, ledger, a } = setup();
    a.replace([item("k1", "u1", 1), item("k2", "u2", 2), item("k3", "u3", 3)], "3");
    store.take();
    const heir = new RangeScopedStore<Item>(ledger);
    a.close();
    ledger.release(a, (o) => (o.metadata.uid === "u3" ? undefined : heir));
    assert.deepEqual(store.take(), [{ op: "delete", key: "default/k3", tombstone: false, uid: "u3" }]);
    assert.equal(heir.claims, 2);
    assert.equal(a.claims, 0);
    heir.replace([item("k1", "u1", 1)], "9");
    assert.deepEqual(
      store.take().map((w) => `${w.op} ${w.key} ${w.tombstone}`),
      ["delete default/k2 true"],
      "the heir's relist knows the inherited keys (and does not rewrite the unchanged one)",
    );
  });
});
