// The managed finalizer against the real API server: finalizer(name) and a
// cleanup that keeps the object until it is done, written with JSON patches
// (no GET, no PUT of the object), measured beside handleFinalizer by hand.
import { strict as assert } from "node:assert";
import { CapturingLogger } from "@tessera/core/testing";
import { silentLogger } from "@tessera/core";
import { eventually, useControlPlane } from "@tessera/testenv";
import { ApiClient, CleanupResult, Manager, Tokens, handleFinalizer } from "../../src/index.js";
import { Widgets, type Widget } from "./widget.js";
import {
  apiRequestCounts,
  createNamespace,
  createWidget,
  deleteWidget,
  installWidgetCrd,
} from "./support/widget-cluster.js";

const FINALIZER = "example.com/release-bucket";

/** The requests of each verb made on widgets between two counts. */
function delta(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const verb of Object.keys({ ...after, ...before })) {
    const n = (after[verb] ?? 0) - (before[verb] ?? 0);
    if (verb !== "WATCH" && verb !== "LIST" && n !== 0) out[verb] = n;
  }
  return out;
}

describe("managed finalizers (real API server)", function () {
  this.timeout(120_000);
  const env = useControlPlane();
  before(async () => installWidgetCrd(env.cp));

  async function newManager(logger = silentLogger) {
    return Manager.create({
      config: { mode: "every-replica", healthBindAddress: "0", metricsBindAddress: "0" },
      kubeConfig: env.cp.kubeConfig,
      env: {},
      logger,
    });
  }

  it("holds a Widget while cleanup says keep, releases it once done, with two PATCHes and no GET or PUT", async () => {
    const ns = await createNamespace(env.cp, "managed");
    const logger = new CapturingLogger();
    const manager = await newManager(logger);
    let release = false;
    const cleanups: number[] = [];
    const reconciled: string[] = [];
    manager
      .controller()
      .for(Widgets)
      .finalizer(FINALIZER)
      .complete({
        reconcile: (request, ctx) => {
          // The finalizer is on the object (written before this reconcile) or on its way.
          reconciled.push(
            `${request.name}:${ctx.current()?.metadata?.deletionTimestamp ? "deleting" : "live"}`,
          );
        },
        cleanup: (widget: Widget) => {
          cleanups.push(Date.now());
          assert.ok(widget.metadata?.deletionTimestamp, "cleanup sees the object being deleted");
          return release ? CleanupResult.done : CleanupResult.keep({ requeueAfterMs: 200 });
        },
      });
    const cache = manager.get(Tokens.Client); // the test reads the cache: its reads are no API requests
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    try {
      await manager.waitForSync();
      const before = await apiRequestCounts(env.cp, "widgets");
      await createWidget(env.cp, ns, "w", {});
      await eventually(
        "the finalizer is added",
        async () =>
          (await cache.get(Widgets, { namespace: ns, name: "w" }))?.metadata?.finalizers?.includes(
            FINALIZER,
          ) === true,
      );
      await eventually("the Widget is reconciled", () => reconciled.includes("w:live"));
      await deleteWidget(env.cp, ns, "w");
      await eventually("cleanup ran three times, keeping it", () => cleanups.length >= 3);
      const held = await cache.get(Widgets, { namespace: ns, name: "w" });
      assert.ok(held?.metadata?.deletionTimestamp, "held: still there, being deleted");
      assert.deepEqual(held.metadata.finalizers, [FINALIZER]);
      const gaps = cleanups.slice(1).map((t, i) => t - cleanups[i]!);
      assert.ok(
        gaps.every((g) => g >= 150),
        `kept, it came back after about 200 ms each time: ${gaps.join(", ")} ms`,
      );
      assert.ok(!reconciled.includes("w:deleting"), "reconcile is not called for an object being deleted");
      release = true;
      await eventually(
        "released: the Widget is gone",
        async () => (await cache.get(Widgets, { namespace: ns, name: "w" })) === undefined,
      );
      const counts = delta(await apiRequestCounts(env.cp, "widgets"), before);
      console.log(`      managed finalizer, requests on widgets by verb: ${JSON.stringify(counts)}`);
      // The test's own POST and DELETE, and the runtime's add and remove: nothing else.
      assert.deepEqual(counts, { POST: 1, DELETE: 1, PATCH: 2 });
      assert.equal(logger.lines.filter((l) => l.level === "error").length, 0, JSON.stringify(logger.lines));
    } finally {
      stop.abort();
      await running;
    }
  });

  it("by hand, handleFinalizer reads the object and replaces it whole (the figures the managed one is measured against)", async () => {
    const ns = await createNamespace(env.cp, "by-hand");
    const manager = await newManager();
    const api = manager.get(Tokens.ApiClient);
    manager
      .controller()
      .for(Widgets)
      .complete(async (_request, ctx) => {
        const widget = ctx.current();
        if (!widget) return;
        await handleFinalizer(api, Widgets, widget, FINALIZER, () => Promise.resolve(), {
          signal: ctx.signal,
        });
      });
    const cache = manager.get(Tokens.Client);
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    try {
      await manager.waitForSync();
      const before = await apiRequestCounts(env.cp, "widgets");
      await createWidget(env.cp, ns, "w", {});
      await eventually(
        "the finalizer is added",
        async () =>
          (await cache.get(Widgets, { namespace: ns, name: "w" }))?.metadata?.finalizers?.includes(
            FINALIZER,
          ) === true,
      );
      await deleteWidget(env.cp, ns, "w");
      await eventually(
        "the Widget is gone",
        async () => (await cache.get(Widgets, { namespace: ns, name: "w" })) === undefined,
      );
      const counts = delta(await apiRequestCounts(env.cp, "widgets"), before);
      console.log(`      handleFinalizer by hand, requests on widgets by verb: ${JSON.stringify(counts)}`);
      assert.ok((counts["GET"] ?? 0) >= 1 && (counts["PUT"] ?? 0) >= 2, JSON.stringify(counts));
    } finally {
      stop.abort();
      await running;
    }
  });

  it("adds the finalizer beside another one, and a stale cache's add fails its test instead of duplicating", async () => {
    const ns = await createNamespace(env.cp, "stale");
    const api = new ApiClient(env.cp.kubeConfig, { fieldManager: "test" });
    await api.create(Widgets, {
      metadata: { name: "w", namespace: ns, finalizers: ["other.io/keep"] },
      spec: {},
    });
    const { ManagedFinalizer } = await import("../../src/controller.js");
    const managed = new ManagedFinalizer({ name: FINALIZER, resource: Widgets, client: api });
    const stale = (await api.get(Widgets, { namespace: ns, name: "w" }))!;
    const ctx = {
      signal: new AbortController().signal,
      logger: silentLogger,
      attempt: 1,
      current: () => stale,
      owned: () => Promise.resolve([]),
      related: () => Promise.resolve([]),
    };
    let reconciles = 0;
    const reconcile = () => void reconciles++;
    const cleanup = () => CleanupResult.done;
    assert.equal(await managed.run(stale, ctx, cleanup, reconcile), undefined);
    assert.deepEqual((await api.get(Widgets, { namespace: ns, name: "w" }))?.metadata?.finalizers, [
      "other.io/keep",
      FINALIZER,
    ]);
    // The same stale copy again: its test of the list fails (422), so no duplicate; retried from the cache.
    assert.deepEqual(await managed.run(stale, ctx, cleanup, reconcile), { requeueAfterMs: 1_000 });
    assert.deepEqual((await api.get(Widgets, { namespace: ns, name: "w" }))?.metadata?.finalizers, [
      "other.io/keep",
      FINALIZER,
    ]);
    assert.equal(reconciles, 1, "reconciled after the add, not after the failed one");
    // On a fresh object without finalizers: the test of their absence.
    await api.create(Widgets, { metadata: { name: "bare", namespace: ns }, spec: {} });
    const bare = (await api.get(Widgets, { namespace: ns, name: "bare" }))!;
    await managed.run(bare, { ...ctx, current: () => bare }, cleanup, reconcile);
    assert.deepEqual((await api.get(Widgets, { namespace: ns, name: "bare" }))?.metadata?.finalizers, [
      FINALIZER,
    ]);
    // Removal tests the entry: from a copy where it sat at another index, it fails rather than remove the wrong one.
    await api.delete(Widgets, { namespace: ns, name: "w" });
    const deleting = (await api.get(Widgets, { namespace: ns, name: "w" }))!;
    const shifted = {
      ...deleting,
      metadata: { ...deleting.metadata, finalizers: [FINALIZER, "other.io/keep"] },
    };
    assert.deepEqual(await managed.run(shifted, ctx, cleanup, reconcile), { requeueAfterMs: 1_000 });
    assert.deepEqual((await api.get(Widgets, { namespace: ns, name: "w" }))?.metadata?.finalizers, [
      "other.io/keep",
      FINALIZER,
    ]);
    assert.equal(await managed.run(deleting, ctx, cleanup, reconcile), undefined);
    assert.deepEqual((await api.get(Widgets, { namespace: ns, name: "w" }))?.metadata?.finalizers, [
      "other.io/keep",
    ]);
  });
});
