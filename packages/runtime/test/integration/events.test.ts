// The event recorder against real API servers: repeats folded into one
// series with few writes, the per-object limit, and core/v1 Events where
// events.k8s.io/v1 is not served.
import { strict as assert } from "node:assert";
import type { V1ConfigMap } from "@kubernetes/client-node";
import { SystemClock } from "@tessera/core";
import { ConfigMaps, KubeTransport } from "@tessera/client";
import { ControlPlane, eventually, useControlPlane } from "@tessera/testenv";
import { ApiClient } from "../../src/index.js";
import { KubeEventRecorder } from "../../src/controller.js";
import { apiRequestCounts, createNamespace } from "./support/widget-cluster.js";

describe("KubeEventRecorder (real API server)", function () {
  this.timeout(120_000);
  const env = useControlPlane();

  const subject = async (cp: ControlPlane, ns: string): Promise<V1ConfigMap> =>
    new ApiClient(cp.kubeConfig, { fieldManager: "test" }).create(ConfigMaps, {
      metadata: { name: "subject", namespace: ns },
    });
  const recorderFor = (
    cp: ControlPlane,
    extra: Partial<ConstructorParameters<typeof KubeEventRecorder>[0]> = {},
  ) =>
    new KubeEventRecorder({
      transport: new KubeTransport(cp.kubeConfig),
      clock: new SystemClock(),
      controller: "example.com/widget-operator",
      instance: "replica-0",
      seriesFlushMs: 1000,
      ...extra,
    });
  const list = async (cp: ControlPlane, path: string) =>
    (JSON.parse((await cp.raw(path)).body) as { items: Array<Record<string, unknown>> }).items;

  it("1,000 repeats of one warning become one Event with series.count 1000, in a handful of writes", async () => {
    const ns = await createNamespace(env.cp, "repeats");
    const object = await subject(env.cp, ns);
    const recorder = recorderFor(env.cp);
    const before = await apiRequestCounts(env.cp, "events");
    for (let i = 0; i < 1000; i++) {
      recorder.record(object, {
        type: "Warning",
        reason: "BackOff",
        action: "Reconcile",
        note: "the external system is down",
      });
      if (i % 100 === 99) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const path = `/apis/events.k8s.io/v1/namespaces/${ns}/events`;
    await eventually("series.count reaches 1000", async () => {
      const items = await list(env.cp, path);
      return items.length === 1 && (items[0]?.["series"] as { count?: number } | undefined)?.count === 1000;
    });
    const after = await apiRequestCounts(env.cp, "events");
    const writes =
      (after["POST"] ?? 0) + (after["PATCH"] ?? 0) - (before["POST"] ?? 0) - (before["PATCH"] ?? 0);
    console.log(`      1000 repeats written in ${writes} requests`);
    assert.ok(writes <= 5, `${writes} writes`);
    recorder.close();
  });

  it("flushAll writes a pending series count at once and leaves no timer (what a stopping manager runs)", async () => {
    const ns = await createNamespace(env.cp, "flush");
    const object = await subject(env.cp, ns);
    // A flush timer far longer than the test: only flushAll can write the count in time.
    const recorder = recorderFor(env.cp, { seriesFlushMs: 3_600_000 });
    const path = `/apis/events.k8s.io/v1/namespaces/${ns}/events`;
    const event = { type: "Normal", reason: "Synced", action: "Reconcile", note: "in sync" } as const;
    recorder.record(object, event);
    await eventually("the Event exists", async () => (await list(env.cp, path)).length === 1);
    for (let i = 0; i < 4; i++) recorder.record(object, event);
    await recorder.flushAll();
    const items = await list(env.cp, path);
    assert.equal((items[0]?.["series"] as { count?: number } | undefined)?.count, 5);
    // Nothing left to write later: a second flush makes no request.
    const before = await apiRequestCounts(env.cp, "events");
    await recorder.flushAll();
    assert.deepEqual(await apiRequestCounts(env.cp, "events"), before);
  });

  it("limits new Events about one object to its burst", async () => {
    const ns = await createNamespace(env.cp, "spam");
    const object = await subject(env.cp, ns);
    const recorder = recorderFor(env.cp, { perObjectBurst: 25 });
    for (let i = 0; i < 40; i++) {
      recorder.record(object, { type: "Normal", reason: `Step${i}`, action: "Reconcile", note: `step ${i}` });
    }
    assert.equal(recorder.dropped, 15);
    await eventually(
      "25 Events",
      async () => (await list(env.cp, `/apis/events.k8s.io/v1/namespaces/${ns}/events`)).length === 25,
    );
    recorder.close();
  });

  it("writes core/v1 Events, with a count, where events.k8s.io/v1 is not served", async () => {
    const cp = new ControlPlane({ apiserverFlags: ["--runtime-config=events.k8s.io/v1=false"] });
    await cp.start();
    try {
      const ns = await createNamespace(cp, "core");
      const object = await subject(cp, ns);
      const recorder = recorderFor(cp);
      for (let i = 0; i < 3; i++) {
        recorder.record(object, { type: "Warning", reason: "Failed", action: "Apply", note: "denied" });
      }
      await eventually("one core Event with count 3", async () => {
        const items = await list(cp, `/api/v1/namespaces/${ns}/events`);
        return items.length === 1 && items[0]?.["count"] === 3;
      });
      const [event] = await list(cp, `/api/v1/namespaces/${ns}/events`);
      assert.equal((event?.["involvedObject"] as { uid?: string }).uid, object.metadata?.uid);
      assert.equal(event?.["reportingComponent"], "example.com/widget-operator");
      recorder.close();
    } finally {
      await cp.stop();
    }
  });
});
