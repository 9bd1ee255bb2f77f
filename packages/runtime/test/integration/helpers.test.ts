// Operator helpers against the real API server: the finalizer dance and
// conflict retries.
import { strict as assert } from "node:assert";
import { silentLogger } from "@tessera/core";
import { ConfigMaps } from "@tessera/client";
import { eventually, useControlPlane } from "@tessera/testenv";
import {
  ApiClient,
  Manager,
  adoptOrphans,
  applyStatusIfChanged,
  controllerOf,
  handleFinalizer,
  retryOnConflict,
  setControllerReference,
} from "../../src/index.js";
import { Widgets } from "./widget.js";
import {
  apiRequestCounts,
  createNamespace,
  createWidget,
  deleteWidget,
  getWidget,
  installWidgetCrd,
  patchWidget,
} from "./support/widget-cluster.js";

const FINALIZER = "example.com/external-record";

describe("operator helpers (real API server)", function () {
  this.timeout(120_000);
  const env = useControlPlane();
  before(async () => installWidgetCrd(env.cp));

  it("handleFinalizer: deleting a Widget runs its cleanup once, then it is gone; a failing cleanup keeps it and retries", async () => {
    const ns = await createNamespace(env.cp, "finalize");
    const external = await createNamespace(env.cp, "external");
    const api = new ApiClient(env.cp.kubeConfig, { fieldManager: "widget-operator" });
    const cleanups = new Map<string, number[]>();
    const manager = await Manager.create({
      config: { mode: "every-replica", healthBindAddress: "0", metricsBindAddress: "0", logLevel: "error" },
      kubeConfig: env.cp.kubeConfig,
      env: {},
      logger: silentLogger, // the failing cleanups are logged as errors, on purpose
    });
    manager
      .controller()
      .for(Widgets)
      .complete(async (request, ctx) => {
        const widget = ctx.current();
        if (!widget) return;
        const state = await handleFinalizer(api, Widgets, widget, FINALIZER, async () => {
          const attempts = [...(cleanups.get(request.name) ?? []), Date.now()];
          cleanups.set(request.name, attempts);
          if (
            widget.spec?.data?.["failCleanups"] &&
            attempts.length <= Number(widget.spec.data["failCleanups"])
          ) {
            throw new Error(`the external system refused (attempt ${attempts.length})`);
          }
          await api.delete(ConfigMaps, { name: `record-${request.name}`, namespace: external });
        });
        if (state !== "active") return;
        await api.apply(ConfigMaps, {
          metadata: { name: `record-${request.name}`, namespace: external },
          data: {},
        });
      });
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    try {
      await createWidget(env.cp, ns, "ok", {});
      await createWidget(env.cp, ns, "flaky", { data: { failCleanups: "3" } });
      for (const name of ["ok", "flaky"]) {
        await eventually(`${name} has its finalizer and record`, async () => {
          const w = await getWidget(env.cp, ns, name);
          const record = await api.get(ConfigMaps, { name: `record-${name}`, namespace: external });
          return w?.metadata?.finalizers?.includes(FINALIZER) === true && record !== undefined;
        });
        await deleteWidget(env.cp, ns, name);
      }
      await eventually("ok is gone", async () => (await getWidget(env.cp, ns, "ok")) === undefined);
      assert.equal(cleanups.get("ok")?.length, 1, "the cleanup ran once");
      assert.equal(await api.get(ConfigMaps, { name: "record-ok", namespace: external }), undefined);
      // The flaky cleanup failed three times: the Widget stayed, with its finalizer, until the fourth.
      await eventually(
        "flaky is gone",
        async () => (await getWidget(env.cp, ns, "flaky")) === undefined,
        60_000,
      );
      const attempts = cleanups.get("flaky")!;
      assert.equal(attempts.length, 4);
      const gaps = attempts.slice(1).map((t, i) => t - attempts[i]!);
      assert.ok(gaps[2]! > gaps[0]!, `retries back off: gaps ${gaps.join(", ")} ms`);
    } finally {
      stop.abort();
      await running;
    }
  });

  it("applyStatusIfChanged: a reconcile that changes nothing makes no status request", async () => {
    const ns = await createNamespace(env.cp, "status");
    const api = new ApiClient(env.cp.kubeConfig, { fieldManager: "widget-operator" });
    let reconciles = 0;
    let writes = 0;
    let reconcilesAtWrite = 0;
    const manager = await Manager.create({
      config: { mode: "every-replica", healthBindAddress: "0", metricsBindAddress: "0" },
      kubeConfig: env.cp.kubeConfig,
      env: {},
      logger: silentLogger,
    });
    manager
      .controller()
      // The status write's own event must reconcile here: that second reconcile is the one that writes nothing.
      .for(Widgets, { statusUpdates: "reconcile" })
      .complete(async (_request, ctx) => {
        const widget = ctx.current();
        if (!widget) return;
        reconciles++;
        const status = { observedGeneration: widget.metadata?.generation ?? 0 };
        const { written } = await applyStatusIfChanged(api, Widgets, widget, status, { force: true });
        if (written) {
          writes++;
          reconcilesAtWrite = reconciles;
        }
      });
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    try {
      await createWidget(env.cp, ns, "w", {});
      await eventually(
        "the status is written",
        async () => (await getWidget(env.cp, ns, "w"))?.status?.observedGeneration === 1,
      );
      await eventually("the write's own event is reconciled", () => reconciles >= 2);
      const before = await apiRequestCounts(env.cp, "widgets", "status");
      // Label changes reconcile again (no predicate), with nothing new for the status.
      for (let i = 0; i < 5; i++)
        await patchWidget(env.cp, ns, "w", { metadata: { labels: { round: String(i) } } });
      await eventually("five more reconciles", () => reconciles >= 7);
      const after = await apiRequestCounts(env.cp, "widgets", "status");
      const sum = (c: Record<string, number>) => Object.values(c).reduce((a, b) => a + b, 0);
      assert.equal(
        sum(after) - sum(before),
        0,
        `status requests: ${JSON.stringify(before)} -> ${JSON.stringify(after)}`,
      );
      assert.equal(writes, 1);
      await patchWidget(env.cp, ns, "w", { spec: { data: { a: "1" } } });
      await eventually(
        "a spec change writes the status",
        async () => (await getWidget(env.cp, ns, "w"))?.status?.observedGeneration === 2,
      );
      // The GET may see the new status before the reconcile's own apply call has returned.
      await eventually("the reconcile counted its write", () => writes >= 2);
      await eventually("the write's own event is reconciled", () => reconciles > reconcilesAtWrite);
      assert.equal(writes, 2, "one write for the spec change, none for its own event");
    } finally {
      stop.abort();
      await running;
    }
  });

  it("adoptOrphans adopts matching orphans, releases what no longer matches, leaves others' objects alone", async () => {
    const ns = await createNamespace(env.cp, "adopt");
    const api = new ApiClient(env.cp.kubeConfig, { fieldManager: "widget-operator" });
    const owner = await createWidget(env.cp, ns, "o", {});
    const other = await createWidget(env.cp, ns, "other", {});
    const cm = (name: string, labels: Record<string, string>) => ({
      metadata: { name, namespace: ns, labels },
      data: {},
    });
    await api.create(ConfigMaps, cm("orphan", { app: "o" }));
    await api.create(ConfigMaps, cm("stranger", { app: "x" }));
    await api.create(ConfigMaps, setControllerReference(owner, cm("stale", { app: "x" })));
    await api.create(ConfigMaps, setControllerReference(other, cm("taken", { app: "o" })));
    const result = await adoptOrphans(api, ConfigMaps, owner, "app=o");
    assert.deepEqual(result, { adopted: ["orphan"], released: ["stale"] });
    const controller = async (name: string) =>
      controllerOf((await api.get(ConfigMaps, { name, namespace: ns }))!)?.name;
    assert.equal(await controller("orphan"), "o");
    assert.equal(await controller("stale"), undefined);
    assert.equal(await controller("stranger"), undefined);
    assert.equal(await controller("taken"), "other");
    assert.deepEqual(await adoptOrphans(api, ConfigMaps, owner, "app=o"), { adopted: [], released: [] });
  });

  it("retryOnConflict: two writers racing on one status, 200 rounds each, lose no update", async () => {
    const ns = await createNamespace(env.cp, "race");
    await createWidget(env.cp, ns, "counter", {});
    const writers = ["a", "b"].map((m) => new ApiClient(env.cp.kubeConfig, { fieldManager: `writer-${m}` }));
    let conflicts = 0;
    const increment = (api: ApiClient) =>
      retryOnConflict(
        `widgets ${ns}/counter`,
        async () => {
          const fresh = (await api.get(Widgets, { name: "counter", namespace: ns }))!;
          try {
            return await api.updateStatus(Widgets, {
              ...fresh,
              status: { observedGeneration: (fresh.status?.observedGeneration ?? 0) + 1 },
            });
          } catch (error) {
            conflicts++;
            throw error;
          }
        },
        { attempts: 50 },
      );
    await Promise.all(
      writers.map(async (api) => {
        for (let i = 0; i < 200; i++) await increment(api);
      }),
    );
    assert.equal((await getWidget(env.cp, ns, "counter"))?.status?.observedGeneration, 400);
    console.log(`      400 increments, ${conflicts} conflicts retried`);
    assert.ok(conflicts > 0, "the writers never raced: the test proves nothing");
  });
});
