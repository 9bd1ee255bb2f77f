import { strict as assert } from "node:assert";
import { ConfigMaps, ApiClient, Manager } from "@tessera/runtime";
import { eventually, parsePrometheusText, useControlPlane } from "@tessera/testenv";
import {
  ConfigMapMirror,
  FINALIZER,
  MIRROR_LABEL,
  NAMESPACES_ANNOTATION,
  SOURCE_NAME_LABEL,
} from "../src/controllers/configmap-mirror.js";

// A real etcd and kube-apiserver, and the mirror running in a manager in this process.
describe("ConfigMapMirror", function () {
  const env = useControlPlane();
  let client: ApiClient;
  before(async () => {
    client = new ApiClient(env.cp.kubeConfig, { fieldManager: "test" });
    for (const name of ["team-a", "team-b"]) {
      await env.cp.raw("/api/v1/namespaces", {
        method: "POST",
        body: JSON.stringify({ metadata: { name } }),
        headers: { "content-type": "application/json" },
      });
    }
  });

  const copy = (namespace: string) => client.get(ConfigMaps, { namespace, name: "settings" });

  describe("with the mirror running", function () {
    const stop = new AbortController();
    let running: Promise<void>;
    let manager: Manager;
    before(async () => {
      manager = await Manager.create({
        kubeConfig: env.cp.kubeConfig,
        config: {
          name: "configmap-mirror",
          mode: "every-replica",
          healthBindAddress: "0",
          metricsBindAddress: "127.0.0.1:0",
          logLevel: "warn",
        },
        env: {},
      });
      manager.register(ConfigMapMirror);
      running = manager.run(stop.signal);
    });
    after(async () => {
      stop.abort();
      await running;
    });

    it("copies a labelled ConfigMap into the namespaces it lists, and follows its data", async () => {
      await client.create(ConfigMaps, {
        metadata: {
          name: "settings",
          namespace: "default",
          labels: { [MIRROR_LABEL]: "true" },
          annotations: { [NAMESPACES_ANNOTATION]: "team-a, team-b" },
        },
        data: { color: "blue" },
      });
      for (const ns of ["team-a", "team-b"]) {
        await eventually(`a copy in ${ns}`, async () => (await copy(ns))?.data?.["color"] === "blue");
      }
      await client.patch(
        ConfigMaps,
        { namespace: "default", name: "settings" },
        {
          type: "merge",
          patch: { data: { color: "green" } },
        },
      );
      for (const ns of ["team-a", "team-b"]) {
        await eventually(
          `the copy in ${ns} follows`,
          async () => (await copy(ns))?.data?.["color"] === "green",
        );
      }
      const source = await client.get(ConfigMaps, { namespace: "default", name: "settings" });
      assert.ok(source?.metadata?.finalizers?.includes(FINALIZER), "the source holds the copies' finalizer");
    });

    it("puts back a copy deleted or changed by hand", async () => {
      await client.delete(ConfigMaps, { namespace: "team-a", name: "settings" });
      await eventually(
        "the copy in team-a is back",
        async () => (await copy("team-a"))?.data?.["color"] === "green",
      );
      await client.patch(
        ConfigMaps,
        { namespace: "team-b", name: "settings" },
        {
          type: "merge",
          patch: { data: { color: "red" } },
        },
      );
      await eventually(
        "the copy in team-b is restored",
        async () => (await copy("team-b"))?.data?.["color"] === "green",
      );
    });

    it("removes the copy of a namespace dropped from the list", async () => {
      await client.patch(
        ConfigMaps,
        { namespace: "default", name: "settings" },
        { type: "merge", patch: { metadata: { annotations: { [NAMESPACES_ANNOTATION]: "team-a" } } } },
      );
      await eventually("team-b's copy is gone", async () => (await copy("team-b")) === undefined);
      assert.ok(await copy("team-a"));
    });

    it("caches only the ConfigMaps it mirrors or made, not the cluster's others", async () => {
      for (let i = 0; i < 10; i++) {
        await client.create(ConfigMaps, {
          metadata: { name: `unrelated-${i}`, namespace: i % 2 ? "team-a" : "default" },
          data: { i: String(i) },
        });
      }
      const all = await client.list(ConfigMaps);
      const mirrorsOrMade = all.filter(
        (cm) =>
          cm.metadata?.labels?.[MIRROR_LABEL] !== undefined ||
          cm.metadata?.labels?.[SOURCE_NAME_LABEL] !== undefined,
      ).length;
      const { metrics } = await manager.endpoints();
      const cached = async () =>
        (
          parsePrometheusText(await (await fetch(`http://127.0.0.1:${metrics!.port}/metrics`)).text()).get(
            "tessera_informer_objects",
          )?.samples ?? []
        )
          .filter((s) => s.labels["resource"] === "configmaps")
          .reduce((sum, s) => sum + s.value, 0);
      // The source in default and its copy in team-a.
      assert.equal(mirrorsOrMade, 2);
      await eventually("the caches hold the source and its copy", async () => (await cached()) === 2);
      assert.ok(all.length >= 12, `the cluster holds ${all.length} ConfigMaps`);
      console.log(`      ConfigMaps cached: ${await cached()} of the cluster's ${all.length}`);
    });

    it("takes the copies back and lets the source go when its label is removed", async () => {
      await client.create(ConfigMaps, {
        metadata: {
          name: "unlabelled",
          namespace: "default",
          labels: { [MIRROR_LABEL]: "true" },
          annotations: { [NAMESPACES_ANNOTATION]: "team-b" },
        },
        data: { color: "blue" },
      });
      const other = () => client.get(ConfigMaps, { namespace: "team-b", name: "unlabelled" });
      await eventually("a copy in team-b", async () => (await other()) !== undefined);
      // The source leaves the sources' cache: its reconcile asks the server what became of it.
      await client.patch(
        ConfigMaps,
        { namespace: "default", name: "unlabelled" },
        { type: "merge", patch: { metadata: { labels: { [MIRROR_LABEL]: null } } } },
      );
      await eventually("the copy is gone and the source released", async () => {
        const source = await client.get(ConfigMaps, { namespace: "default", name: "unlabelled" });
        return (await other()) === undefined && !source?.metadata?.finalizers?.includes(FINALIZER);
      });
    });

    it("takes the copies with a deleted source, then lets the source go", async () => {
      await client.delete(ConfigMaps, { namespace: "default", name: "settings" });
      await eventually("copies and source are gone", async () => {
        const source = await client.get(ConfigMaps, { namespace: "default", name: "settings" });
        return (await copy("team-a")) === undefined && source === undefined;
      });
    });
  });
});
