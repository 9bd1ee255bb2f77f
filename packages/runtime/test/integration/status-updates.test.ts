// What the primary watch's default (status-only updates ignored) saves, on
// the real API server: a controller that writes its status reconciles 50
// Widgets through a create and two spec changes, with status updates
// reconciled (controller-runtime's default), ignored (Tessera's and JOSDK's),
// and with generationChanged (which also drops label changes).
import { strict as assert } from "node:assert";
import { setTimeout as sleep } from "node:timers/promises";
import { eventually, useControlPlane } from "@tessera/testenv";
import { ApiClient, Manager, type ForOptions, type ReconcileContext, type Request } from "../../src/index.js";
import { generationChanged } from "../../src/predicates.js";
import { Widgets, type Widget } from "./widget.js";
import { createNamespace, installWidgetCrd } from "./support/widget-cluster.js";

const WIDGETS = 50;

describe("status-only updates of the primary (real API server)", function () {
  this.timeout(240_000);
  const env = useControlPlane();
  let api: ApiClient;
  before(async () => {
    await installWidgetCrd(env.cp);
    api = new ApiClient(env.cp.kubeConfig, { fieldManager: "tessera-test" });
  });

  /** Reconciles of WIDGETS Widgets through a create, two spec changes and a label change, with `options` on for(). */
  async function measure(
    label: string,
    options: ForOptions<Widget>,
  ): Promise<{ total: number; afterLabel: number }> {
    const ns = await createNamespace(env.cp, "status-updates");
    const names = Array.from({ length: WIDGETS }, (_, i) => `w${i}`);
    const manager = await Manager.create({
      config: { mode: "every-replica", healthBindAddress: "0", metricsBindAddress: "0", logLevel: "error" },
      kubeConfig: env.cp.kubeConfig,
      env: {},
    });
    let reconciles = 0;
    manager
      .controller()
      .named(`status-${label}`)
      .for(Widgets, { ...options, namespaces: ns })
      .withOptions({ concurrency: 4 })
      .complete(async (request: Request, ctx: ReconcileContext<Widget>) => {
        reconciles++;
        const widget = ctx.current();
        const generation = widget?.metadata?.generation;
        if (!widget || widget.status?.observedGeneration === generation) return;
        await api.applyStatus(
          Widgets,
          {
            metadata: { name: request.name, namespace: request.namespace },
            status: { observedGeneration: generation },
          },
          { signal: ctx.signal, force: true },
        );
      });
    const settled = async (generation: number) => {
      await eventually(
        `every Widget observed generation ${generation}`,
        async () =>
          (await api.list(Widgets, { namespace: ns })).filter(
            (w) => w.status?.observedGeneration === generation,
          ).length === WIDGETS,
        60_000,
      );
      await sleep(1_000);
    };
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    try {
      assert.ok(await manager.waitForSync(AbortSignal.timeout(60_000)), "the manager synced");
      await Promise.all(
        names.map((name) =>
          api.create(Widgets, { metadata: { name, namespace: ns }, spec: { data: { v: "0" } } }),
        ),
      );
      await settled(1);
      for (const v of ["1", "2"]) {
        await Promise.all(
          names.map((name) =>
            api.patch(Widgets, { namespace: ns, name }, { type: "merge", patch: { spec: { data: { v } } } }),
          ),
        );
        await settled(Number(v) + 1);
      }
      const before = reconciles;
      await Promise.all(
        names.map((name) =>
          api.patch(
            Widgets,
            { namespace: ns, name },
            { type: "merge", patch: { metadata: { labels: { tier: "a" } } } },
          ),
        ),
      );
      await sleep(2_000);
      return { total: before, afterLabel: reconciles - before };
    } finally {
      stop.abort();
      await running;
    }
  }

  it("ignoring status-only updates (the default) halves the reconciles of a controller that writes its status, and keeps label changes", async () => {
    const reconciling = await measure("reconcile", { statusUpdates: "reconcile" });
    const ignoring = await measure("ignore", {});
    const generation = await measure("generation", {
      statusUpdates: "reconcile",
      predicates: [generationChanged()],
    });
    console.log(
      `      ${WIDGETS} Widgets, a create and two spec changes: ${reconciling.total} reconciles with status updates, ${ignoring.total} ignoring them (the default), ${generation.total} with generationChanged; a label change then: ${reconciling.afterLabel}, ${ignoring.afterLabel}, ${generation.afterLabel}`,
    );
    // Each spec change reconciles once; reconciling status updates adds one for each status write.
    assert.ok(
      ignoring.total >= 3 * WIDGETS && ignoring.total <= 3 * WIDGETS + WIDGETS / 10,
      `the default: one reconcile per change, ${ignoring.total}`,
    );
    assert.ok(
      reconciling.total >= 2 * ignoring.total - WIDGETS / 10,
      `status updates reconciled: ${reconciling.total}`,
    );
    assert.equal(ignoring.afterLabel, WIDGETS, "a label change still reconciles by default");
    assert.equal(generation.afterLabel, 0, "generationChanged drops label changes");
  });
});
