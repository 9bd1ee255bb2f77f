import { strict as assert } from "node:assert";
import { FakeClock } from "@tessera/core/testing";
import { ApiStatusError, IndexerError, type ListerWatcher } from "@tessera/reflector";
import { type KubeObject, type Resource, defineResource } from "@tessera/client";
import { InMemoryListerWatcher } from "@tessera/reflector/testing";
import {
  CacheSyncError,
  FactoryStateError,
  indexByLabel,
  SharedInformerFactory,
  stripManagedFields,
  type ListerWatcherRequest,
} from "../src/index.js";
import { settle, widget, type Widget } from "./informer-harness.js";
import { ReplicaHandler } from "./replica.js";

const widgets = defineResource<Widget>({
  group: "test.example",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  scope: "Namespaced",
});
const gadgets = defineResource<Widget>({
  group: "test.example",
  version: "v1",
  kind: "Gadget",
  plural: "gadgets",
  scope: "Cluster",
});
const missing = defineResource({
  group: "nope.example",
  version: "v1",
  kind: "Ghost",
  plural: "ghosts",
  scope: "Namespaced",
});

/** A resource the server does not serve: every list and watch fails with 404. */
class NotFoundListerWatcher implements ListerWatcher {
  constructor(readonly resource: string) {}
  list(): Promise<never> {
    return Promise.reject(this.notFound("list"));
  }
  watch(): Promise<never> {
    return Promise.reject(this.notFound("watch"));
  }
  private notFound(verb: "list" | "watch"): ApiStatusError {
    return new ApiStatusError(
      { resource: this.resource, verb },
      404,
      "NotFound",
      "the server could not find the requested resource",
      undefined,
      "response",
    );
  }
}

class Fixture {
  readonly clock = new FakeClock();
  /** Aborts the factory's run. */
  readonly controller = new AbortController();
  running: Promise<void> | undefined;
  readonly requests: ListerWatcherRequest[] = [];
  readonly collections = new Map<string, InMemoryListerWatcher<Widget>>();
  readonly factory: SharedInformerFactory;

  constructor(
    defaults: { namespace?: string; transform?: (o: KubeObject) => KubeObject; compact?: boolean } = {},
  ) {
    this.factory = new SharedInformerFactory({
      listerWatcherFor: (request) => {
        this.requests.push(request);
        const name = `${request.resource.plural}.${request.resource.group}`;
        if (request.resource.group === "nope.example") return new NotFoundListerWatcher(name);
        let lw = this.collections.get(name);
        if (!lw) {
          lw = new InMemoryListerWatcher<Widget>({ resource: name });
          this.collections.set(name, lw);
        }
        return lw;
      },
      clock: this.clock,
      reflector: { watchList: true },
      ...defaults,
    });
  }

  /** Runs the factory until {@link Fixture.stop}. */
  run(): void {
    this.running = this.factory.run(this.controller.signal);
  }

  /** Aborts the factory's run and waits for it to settle. */
  async stop(): Promise<void> {
    this.controller.abort();
    await this.running;
  }

  collection(resource: Resource): InMemoryListerWatcher<Widget> {
    return this.collections.get(`${resource.plural}.${resource.group}`) as InMemoryListerWatcher<Widget>;
  }
}

describe("SharedInformerFactory", () => {
  let f: Fixture | undefined;
  afterEach(async () => {
    await f?.stop();
    f = undefined;
  });

  it("returns the same informer for the same resource and options, and another for other options", () => {
    f = new Fixture({ namespace: "team-a" });
    const a = f.factory.informerFor<Widget>(widgets);
    assert.equal(f.factory.informerFor<Widget>(widgets), a);
    assert.equal(
      f.factory.informerFor<Widget>(widgets, { namespace: "team-a" }),
      a,
      "the default spelled out",
    );
    const others = [
      f.factory.informerFor(widgets, { namespace: "" }),
      f.factory.informerFor(widgets, { namespace: "team-b" }),
      f.factory.informerFor(widgets, { labelSelector: "app=web" }),
      f.factory.informerFor(widgets, { fieldSelector: "metadata.name=x" }),
      f.factory.informerFor(widgets, { metadataOnly: true }),
      f.factory.informerFor(widgets, { transform: stripManagedFields }),
    ];
    assert.equal(new Set([a, ...others]).size, 7);
    assert.equal(f.factory.informerFor(widgets, { transform: stripManagedFields }), others[5]);
    assert.equal(f.factory.metadataInformerFor(widgets), others[4]);
    assert.equal(f.factory.informers.length, 7);
    assert.equal(a.namespace, undefined, "the lister-watcher decides the namespace; the request carries it");
    assert.deepEqual(
      f.requests.map((r) => [
        r.namespace ?? "",
        r.labelSelector ?? "",
        r.fieldSelector ?? "",
        r.metadataOnly,
      ]),
      [
        ["team-a", "", "", false],
        ["", "", "", false],
        ["team-b", "", "", false],
        ["team-a", "app=web", "", false],
        ["team-a", "", "metadata.name=x", false],
        ["team-a", "", "", true],
        ["team-a", "", "", false],
      ],
    );
    // A cluster-scoped resource ignores the default namespace.
    f.factory.informerFor(gadgets);
    assert.equal(f.requests.at(-1)?.namespace, undefined);
  });

  it("applies the factory's default transform unless an informer opts out", async () => {
    f = new Fixture({ transform: stripManagedFields });
    const stripped = f.factory.informerFor<Widget>(widgets);
    const full = f.factory.informerFor<Widget>(widgets, { transform: null });
    assert.notEqual(stripped, full);
    f.run();
    const lw = f.collection(widgets);
    lw.put({
      ...widget("w"),
      metadata: { ...widget("w").metadata, managedFields: [{ manager: "kubectl" }] },
    });
    await f.factory.requireSync();
    await settle(() => stripped.lister.size === 1 && full.lister.size === 1);
    assert.equal(stripped.lister.get("w", "default")?.metadata.managedFields, undefined);
    assert.deepEqual(full.lister.get("w", "default")?.metadata.managedFields, [{ manager: "kubectl" }]);
  });

  it("starts every informer, starts those made later at once, and waits for all to sync", async () => {
    f = new Fixture();
    const first = f.factory.informerFor<Widget>(widgets);
    assert.equal(first.isRunning, false);
    f.run();
    assert.equal(first.isRunning, true);
    const later = f.factory.informerFor<Widget>(gadgets);
    assert.equal(later.isRunning, true);
    await f.factory.requireSync(undefined, 10_000);
    assert.ok(first.hasSynced() && later.hasSynced());
  });

  it("fails requireSync with an error naming the resource that does not exist, and the others keep working", async () => {
    f = new Fixture();
    const good = f.factory.informerFor<Widget>(widgets);
    const ghost = f.factory.informerFor(missing, { namespace: "ns-1" });
    const replica = new ReplicaHandler<Widget>();
    good.addEventHandler(replica);
    f.run();
    const wait = f.factory.requireSync(undefined, 5_000);
    const outcome = wait.then(
      () => undefined,
      (err: unknown) => err,
    );
    for (let i = 0; i < 60; i++) await f.clock.advance(100);
    const err = await outcome;
    assert.ok(err instanceof CacheSyncError, `rejected with ${String(err)}`);
    assert.equal(err.reason, "timeout");
    assert.deepEqual(
      err.unsynced.map((u) => u.resource),
      ["ghosts.nope.example"],
    );
    assert.match(err.message, /ghosts\.nope\.example/);
    assert.match(err.message, /404 NotFound/);
    assert.equal(ghost.hasSynced(), false);
    assert.equal(good.hasSynced(), true);
    f.collection(widgets).put(widget("still-works"));
    await settle(() => replica.objects.size === 1);
    assert.equal(good.lister.get("still-works", "default")?.metadata.name, "still-works");
  });

  it("rejects requireSync when its signal aborts, naming what had not synced", async () => {
    f = new Fixture();
    f.factory.informerFor(missing);
    f.run();
    const stop = new AbortController();
    const wait = f.factory.requireSync(stop.signal);
    stop.abort(new Error("manager stopping"));
    await assert.rejects(wait, (err: unknown) => err instanceof CacheSyncError && err.reason === "aborted");
  });

  it("stops the watch and frees the cache of an informer once its last user releases it", async () => {
    f = new Fixture();
    const a = f.factory.informerFor<Widget>(widgets);
    const b = f.factory.informerFor<Widget>(widgets);
    assert.equal(a, b);
    f.run();
    const lw = f.collection(widgets);
    for (let i = 0; i < 10; i++) lw.put(widget(`w-${i}`));
    await f.factory.requireSync();
    await settle(() => a.lister.size === 10);
    assert.equal(lw.openWatches, 1);
    await f.factory.release(a);
    assert.equal(lw.openWatches, 1, "still used once");
    assert.equal(a.isRunning, true);
    await f.factory.release(b);
    assert.equal(lw.openWatches, 0, "the watch stopped");
    assert.equal(a.isStopped, true);
    assert.equal(a.lister.size, 0, "the cache was emptied");
    assert.equal(a.handlerCount, 0);
    assert.equal(f.factory.informers.length, 0);
    const again = f.factory.informerFor<Widget>(widgets);
    assert.notEqual(again, a, "a new informer after the release");
    await f.factory.requireSync();
    await settle(() => again.lister.size === 10);
    assert.equal(again.lister.size, 10);
  });

  it("answers waitForSync false when its signal aborts, true once every informer held synced, and runs once", async () => {
    f = new Fixture();
    const good = f.factory.informerFor<Widget>(widgets);
    const ghost = f.factory.informerFor(missing);
    f.run();
    assert.throws(() => f?.factory.run(new AbortController().signal), FactoryStateError);
    const giveUp = new AbortController();
    const abandoned = f.factory.waitForSync(giveUp.signal);
    for (let i = 0; i < 10; i++) await f.clock.advance(100);
    giveUp.abort();
    assert.equal(await abandoned, false);
    assert.equal(f.factory.hasSynced(), false);
    assert.equal(good.hasSynced(), true);
    await f.factory.release(ghost);
    assert.equal(ghost.isStopped, true, "a released informer stops, synced or not");
    assert.equal(await f.factory.waitForSync(), true, "only the informers held count");
    assert.equal(f.factory.hasSynced(), true);
  });

  it("ends waits for the sync when the factory stops first: waitForSync answers false, requireSync names the informers", async () => {
    f = new Fixture();
    f.factory.informerFor(missing);
    f.run();
    const answer = f.factory.waitForSync();
    const required = f.factory.requireSync();
    const outcome = required.then(
      () => undefined,
      (err: unknown) => err,
    );
    await f.clock.advance(100);
    await f.stop();
    assert.equal(await answer, false);
    const err = await outcome;
    assert.ok(err instanceof CacheSyncError, `rejected with ${String(err)}`);
    assert.equal(err.reason, "stopped");
    assert.deepEqual(
      err.unsynced.map((u) => u.resource),
      ["ghosts.nope.example"],
    );
    assert.match(err.message, /informers stopped/);
  });

  it("makes informers compact by its default unless one asks otherwise; the first request decides", async () => {
    f = new Fixture({ compact: true });
    const compact = f.factory.informerFor<Widget>(widgets);
    const plain = f.factory.informerFor<Widget>(gadgets, { compact: false });
    assert.equal(compact.compact, true);
    assert.equal(plain.compact, false);
    assert.equal(
      f.factory.informerFor<Widget>(widgets, { compact: false }),
      compact,
      "not part of the identity",
    );
    f.collection(widgets).put(widget("w-1", "a", 1));
    f.run();
    await settle(() => compact.lister.size === 1);
    assert.deepEqual(compact.lister.get("w-1", "a")?.spec, { size: 1 }, "read back as written");
    assert.equal(new Fixture().factory.informerFor<Widget>(widgets).compact, false, "off without a default");
  });

  it("adds the indexers a later caller needs to the shared informer", () => {
    f = new Fixture();
    const byApp = indexByLabel<Widget>("app");
    const informer = f.factory.informerFor<Widget>(widgets, { indexers: { app: byApp } });
    f.factory.informerFor<Widget>(widgets, { indexers: { app: byApp, tier: indexByLabel("tier") } });
    assert.deepEqual(Object.keys(informer.getIndexers()).sort(), ["app", "namespace", "tier"]);
    assert.throws(
      () => f?.factory.informerFor<Widget>(widgets, { indexers: { app: indexByLabel("other") } }),
      IndexerError,
    );
  });

  it("stops everything when its run is aborted and refuses to be used or run again after", async () => {
    f = new Fixture();
    const a = f.factory.informerFor(widgets);
    const b = f.factory.informerFor(gadgets);
    f.run();
    await f.factory.requireSync();
    await f.stop();
    assert.ok(a.isStopped && b.isStopped);
    assert.equal(f.collection(widgets).openWatches + f.collection(gadgets).openWatches, 0);
    assert.throws(() => f?.factory.informerFor(widgets), FactoryStateError);
    assert.throws(() => f?.factory.run(new AbortController().signal), FactoryStateError);
  });

  it("needs a kubeConfig or a listerWatcherFor", () => {
    assert.throws(() => new SharedInformerFactory({}), TypeError);
  });
});
