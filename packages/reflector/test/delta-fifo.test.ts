import { strict as assert } from "node:assert";
import fc from "fast-check";
import {
  DeletedFinalStateUnknown,
  DeltaFIFO,
  FifoClosedError,
  IndexedStore,
  type DeltaBatch,
} from "../src/index.js";
import { cm, type TestObject } from "./support/objects.js";

function applyTo(cache: IndexedStore<TestObject>, batch: DeltaBatch<TestObject>): void {
  for (const d of batch.deltas) {
    if (d.type === "Deleted") cache.delete(d.object);
    else cache.update(d.object as TestObject);
  }
}

function drain(fifo: DeltaFIFO<TestObject>, cache?: IndexedStore<TestObject>): DeltaBatch<TestObject>[] {
  const out: DeltaBatch<TestObject>[] = [];
  while (
    fifo.popSync((b) => {
      out.push(b);
      if (cache) applyTo(cache, b);
    })
  );
  return out;
}

const summary = (batches: DeltaBatch<TestObject>[]) =>
  batches.map((b) => `${b.key}:${b.deltas.map((d) => d.type).join(",")}`);

describe("DeltaFIFO", () => {
  it("hands out keys in first-queued order, each once, with its deltas in order", () => {
    const fifo = new DeltaFIFO<TestObject>();
    fifo.add(cm("a", "1"));
    fifo.add(cm("b", "2"));
    fifo.delete(cm("a", "3"));
    fifo.add(cm("a", "4"));
    assert.deepEqual(fifo.listKeys(), ["default/a", "default/b"]);
    assert.deepEqual(summary(drain(fifo)), ["default/a:Added,Deleted,Added", "default/b:Added"]);
  });

  it("compresses consecutive live deltas into one with the newest object", () => {
    const fifo = new DeltaFIFO<TestObject>();
    fifo.add(cm("a", "1"));
    fifo.update(cm("a", "2"));
    fifo.update(cm("a", "3"));
    const [batch] = drain(fifo);
    assert.equal(batch?.deltas.length, 1);
    assert.equal(batch?.deltas[0]?.type, "Added");
    assert.equal((batch?.deltas[0]?.object as TestObject).metadata?.resourceVersion, "3");
  });

  it("gives a key's deltas as a copy, whether it holds one or several, and hands out what getByKey showed", () => {
    const fifo = new DeltaFIFO<TestObject>();
    fifo.replace([cm("a", "1"), cm("b", "1")], "1");
    fifo.delete(cm("b", "2"));
    const one = fifo.getByKey("default/a");
    const two = fifo.getByKey("default/b");
    assert.deepEqual(
      one?.map((d) => d.type),
      ["Replaced"],
    );
    assert.deepEqual(
      two?.map((d) => d.type),
      ["Replaced", "Deleted"],
    );
    one?.pop();
    two?.pop();
    assert.equal(fifo.getByKey("default/a")?.length, 1, "a copy: changing it leaves the queue alone");
    assert.equal(fifo.getByKey("default/b")?.length, 2);
    fifo.delete(cm("b", "3")); // two deletions compress into the last delta of a key holding several
    assert.deepEqual(summary(drain(fifo)), ["default/a:Replaced", "default/b:Replaced,Deleted"]);
    assert.equal(fifo.getByKey("default/a"), undefined);
  });

  it("compresses two deletions into one, keeping the one that knows the final state", () => {
    const cache = new IndexedStore<TestObject>();
    cache.add(cm("a", "1"));
    const fifo = new DeltaFIFO<TestObject>({ knownObjects: cache });
    fifo.delete(cm("a", "2"));
    fifo.replace([], "3"); // would add a tombstone for a
    const [batch] = drain(fifo);
    assert.equal(batch?.deltas.length, 1);
    assert.ok(!(batch?.deltas[0]?.object instanceof DeletedFinalStateUnknown));
  });

  it("queues tombstones on replace for known and for queued objects missing from the list", () => {
    const cache = new IndexedStore<TestObject>();
    cache.add(cm("known", "1"));
    cache.add(cm("kept", "1"));
    const fifo = new DeltaFIFO<TestObject>({ knownObjects: cache });
    fifo.add(cm("queued", "2"));
    fifo.replace([cm("kept", "5")], "6");
    const batches = drain(fifo);
    assert.deepEqual(summary(batches), [
      "default/queued:Added,Deleted",
      "default/kept:Replaced",
      "default/known:Deleted",
    ]);
    const tomb = batches[2]?.deltas[0]?.object as DeletedFinalStateUnknown<TestObject>;
    assert.ok(tomb instanceof DeletedFinalStateUnknown);
    assert.equal(tomb.key, "default/known");
    assert.equal(tomb.obj.metadata?.resourceVersion, "1");
    const queuedTomb = batches[0]?.deltas[1]?.object as DeletedFinalStateUnknown<TestObject>;
    assert.equal(queuedTomb.obj.metadata?.resourceVersion, "2");
  });

  it("emits Sync instead of Replaced when asked", () => {
    const fifo = new DeltaFIFO<TestObject>({ emitDeltaTypeReplaced: false });
    fifo.replace([cm("a", "1")], "1");
    assert.deepEqual(summary(drain(fifo)), ["default/a:Sync"]);
  });

  it("ignores a delete of an object neither known nor queued", () => {
    const fifo = new DeltaFIFO<TestObject>({ knownObjects: new IndexedStore() });
    fifo.delete(cm("ghost", "1"));
    assert.equal(fifo.length, 0);
  });

  it("has synced once everything the first replace queued was processed", async () => {
    const fifo = new DeltaFIFO<TestObject>();
    assert.equal(fifo.hasSynced(), false);
    fifo.replace([cm("a", "1"), cm("b", "1")], "1");
    fifo.add(cm("c", "2"));
    assert.equal(fifo.hasSynced(), false);
    const seen: boolean[] = [];
    await fifo.pop(async (b) => {
      seen.push(b.isInInitialList);
      await Promise.resolve();
      assert.equal(fifo.hasSynced(), false, "not while the last initial item is still being processed");
    });
    await fifo.pop((b) => {
      seen.push(b.isInInitialList);
    });
    assert.equal(fifo.hasSynced(), true);
    await fifo.pop((b) => {
      seen.push(b.isInInitialList);
    });
    assert.deepEqual(seen, [true, true, false]);
  });

  it("pop waits for an item, and returns false on close or abort", async () => {
    const fifo = new DeltaFIFO<TestObject>();
    const popped = fifo.pop(() => {});
    fifo.add(cm("a", "1"));
    assert.equal(await popped, true);
    const abort = new AbortController();
    const waiting = fifo.pop(() => assert.fail("nothing to pop"), abort.signal);
    abort.abort();
    assert.equal(await waiting, false);
    const closed = fifo.pop(() => assert.fail("closed"));
    fifo.close();
    assert.equal(await closed, false);
    assert.throws(() => fifo.add(cm("b", "1")), FifoClosedError);
  });

  it("resyncs known objects that have nothing queued", () => {
    const cache = new IndexedStore<TestObject>();
    cache.add(cm("a", "1"));
    cache.add(cm("b", "1"));
    const fifo = new DeltaFIFO<TestObject>({ knownObjects: cache });
    fifo.update(cm("a", "2"));
    fifo.resync();
    assert.deepEqual(summary(drain(fifo)), ["default/a:Updated", "default/b:Sync"]);
  });

  it("re-queues a batch with addIfNotPresent unless the key came back meanwhile", () => {
    const fifo = new DeltaFIFO<TestObject>();
    fifo.add(cm("a", "1"));
    let batch: DeltaBatch<TestObject> | undefined;
    fifo.popSync((b) => (batch = b));
    fifo.addIfNotPresent(batch as DeltaBatch<TestObject>);
    assert.deepEqual(fifo.listKeys(), ["default/a"]);
    fifo.addIfNotPresent(batch as DeltaBatch<TestObject>);
    assert.equal(fifo.length, 1);
  });

  it("property: a consumer applying every batch ends with exactly the producer's state", () => {
    const name = fc.constantFrom("a", "b", "c", "d", "e");
    const op = fc.oneof(
      fc.record({ op: fc.constant("add" as const), name, v: fc.nat(99) }),
      fc.record({ op: fc.constant("update" as const), name, v: fc.nat(99) }),
      fc.record({ op: fc.constant("delete" as const), name }),
      fc.record({ op: fc.constant("replace" as const), items: fc.dictionary(name, fc.nat(99)) }),
      fc.record({ op: fc.constant("pop" as const), n: fc.nat(3) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const cache = new IndexedStore<TestObject>();
        const fifo = new DeltaFIFO<TestObject>({ knownObjects: cache });
        const model = new Map<string, string>();
        for (const o of ops) {
          switch (o.op) {
            case "add":
            case "update":
              fifo[o.op](cm(o.name, String(o.v)));
              model.set(`default/${o.name}`, String(o.v));
              break;
            case "delete":
              fifo.delete(cm(o.name, "0"));
              model.delete(`default/${o.name}`);
              break;
            case "replace":
              fifo.replace(
                Object.entries(o.items).map(([n, v]) => cm(n, String(v))),
                "1",
              );
              model.clear();
              for (const [n, v] of Object.entries(o.items)) model.set(`default/${n}`, String(v));
              break;
            case "pop":
              for (let i = 0; i < o.n; i++) fifo.popSync((b) => applyTo(cache, b));
              break;
          }
          // Invariants: each key queued once, no batch empty, no two mergeable deltas side by side.
          const keys = fifo.listKeys();
          assert.equal(new Set(keys).size, keys.length);
          for (const k of keys) {
            const ds = fifo.getByKey(k) ?? [];
            assert.ok(ds.length > 0);
            for (let i = 1; i < ds.length; i++) {
              assert.notEqual(
                ds[i - 1]?.type === "Deleted",
                ds[i]?.type === "Deleted",
                "adjacent deltas compress",
              );
            }
          }
        }
        drain(fifo, cache);
        const got = new Map(
          cache.list().map((o) => [`default/${o.metadata?.name}`, o.metadata?.resourceVersion]),
        );
        assert.deepEqual(got, model);
      }),
      { numRuns: 300 },
    );
  });
});
