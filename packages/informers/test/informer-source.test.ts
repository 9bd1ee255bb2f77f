import { strict as assert } from "node:assert";
import { FakeClock } from "@tessera/core/testing";
import { DeletedFinalStateUnknown, type ReflectorStore } from "@tessera/reflector";
import { InMemoryListerWatcher } from "@tessera/reflector/testing";
import { SharedIndexInformer, type InformerSource, type SharedIndexInformerOptions } from "../src/index.js";
import { settle, widget, type Widget } from "./informer-harness.js";
import { ReplicaHandler } from "./replica.js";

/** A source driven by the test: it writes what the test tells it and reports sync when told. */
class ManualSource implements InformerSource {
  store!: ReflectorStore<Widget>;
  lastSyncResourceVersion = "";
  lastError: unknown;
  runs = 0;
  private synced = false;
  private waiters: (() => void)[] = [];
  private failRun: ((err: unknown) => void) | undefined;

  run(signal: AbortSignal): Promise<void> {
    this.runs++;
    return new Promise<void>((resolve, reject) => {
      this.failRun = reject;
      signal.addEventListener("abort", () => resolve(), { once: true });
    });
  }

  hasSynced(): boolean {
    return this.synced;
  }

  waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      this.waiters.push(() => resolve(true));
      signal?.addEventListener("abort", () => resolve(false), { once: true });
    });
  }

  markSynced(rv: string): void {
    this.synced = true;
    this.lastSyncResourceVersion = rv;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  fail(err: unknown): void {
    this.failRun?.(err);
  }
}

function versioned(name: string, rv: number, size = 0): Widget {
  const w = widget(name, "default", size);
  w.metadata.resourceVersion = String(rv);
  return w;
}

describe("SharedIndexInformer fed by an external source", () => {
  const stops: AbortController[] = [];
  afterEach(() => {
    for (const s of stops.splice(0)) s.abort();
  });

  function start(options: Partial<SharedIndexInformerOptions<Widget>> = {}) {
    const source = new ManualSource();
    const lw = new InMemoryListerWatcher<Widget>();
    const informer = new SharedIndexInformer<Widget>({
      listerWatcher: lw,
      clock: new FakeClock(),
      source: (store) => {
        source.store = store;
        return source;
      },
      ...options,
    });
    const stop = new AbortController();
    stops.push(stop);
    const done = informer.run(stop.signal);
    return { source, lw, informer, stop, done };
  }

  it("is synced only once the source synced and everything it queued until then was handled", async () => {
    const { source, lw, informer, stop, done } = start();
    const replica = new ReplicaHandler<Widget>();
    const initial: boolean[] = [];
    informer.addEventHandler({
      onAdd: (obj, isInInitialList) => {
        initial.push(isInInitialList);
        replica.onAdd(obj);
      },
      onUpdate: (o, n) => replica.onUpdate(o, n),
      onDelete: (o) => replica.onDelete(o),
    });
    for (let i = 0; i < 10; i++) source.store.add(versioned(`w-${i}`, 10 + i));
    await settle(() => informer.lister.size === 10);
    assert.equal(informer.lister.size, 10);
    assert.equal(informer.hasSynced(), false, "writes alone are not a complete snapshot");

    let cachedWhenSynced = -1;
    void informer.waitForSync().then(() => (cachedWhenSynced = informer.lister.size));
    for (let i = 10; i < 1000; i++) source.store.add(versioned(`w-${i}`, 10 + i));
    source.markSynced("1009");
    assert.equal(informer.hasSynced(), false);
    await settle(() => informer.hasSynced());
    await settle(() => cachedWhenSynced >= 0);
    assert.equal(cachedWhenSynced, 1000, "every object written before the source synced was cached first");
    assert.equal(informer.lastSyncResourceVersion, "1009");

    source.store.add(versioned("late", 2000));
    await settle(() => initial.length === 1001);
    assert.equal(initial.filter((x) => x).length, 1000, "snapshot adds are marked isInInitialList");
    assert.equal(initial[1000], false, "a later add is not");
    assert.equal(lw.lists + lw.watches, 0, "the informer's own ListerWatcher is not used");
    assert.equal(source.runs, 1);
    stop.abort();
    await done;
  });

  it("is synced by an empty snapshot, with nothing written", async () => {
    const { source, informer } = start();
    await settle(undefined, 20);
    assert.equal(informer.hasSynced(), false);
    source.markSynced("5");
    await settle(() => informer.hasSynced());
    assert.equal(informer.hasSynced(), true);
    assert.equal(informer.lister.size, 0);
  });

  it("applies the transform to what the source writes, and passes deletions and tombstones on", async () => {
    const { source, informer } = start({
      transform: (w) => ({ ...w, metadata: { ...w.metadata, labels: { transformed: "yes" } } }),
    });
    const replica = new ReplicaHandler<Widget>();
    informer.addEventHandler(replica);
    source.store.add(versioned("a", 1));
    source.store.add(versioned("b", 2));
    source.store.add(versioned("c", 3));
    source.markSynced("3");
    await settle(() => informer.hasSynced());
    source.store.update(versioned("a", 4, 7));
    source.store.delete(versioned("b", 5));
    source.store.delete(new DeletedFinalStateUnknown("default/c", versioned("c", 3)));
    await settle(() => informer.lister.size === 1 && replica.updates === 1);
    const a = informer.lister.get("default/a");
    assert.equal(a?.metadata.labels?.transformed, "yes");
    assert.equal(a?.spec?.size, 7);
    assert.equal(replica.deletes, 2);
    assert.equal(replica.tombstones, 1);
    assert.deepEqual(replica.violations, []);
  });

  it("reports the source's last error and stops with the source's failure", async () => {
    const { source, informer, done } = start();
    source.lastError = new Error("list failed");
    assert.equal((informer.lastError as Error).message, "list failed");
    source.fail(new Error("consistency check failed"));
    await assert.rejects(done, /consistency check failed/);
    assert.equal(informer.isStopped, true);
  });
});
