import { strict as assert } from "node:assert";
import { ConfigMaps, ApiClient, Manager } from "@tessera/runtime";
import { eventually, useControlPlane } from "@tessera/testenv";
import {
  ConfigMapMirror,
  FINALIZER,
  MIRROR_LABEL,
  NAMESPACES_ANNOTATION,
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
    before(async () => {
      const manager = await Manager.create({
        kubeConfig: env.cp.kubeConfig,
        config: {
          name: "configmap-mirror",
          mode: "every-replica",
          healthBindAddress: "0",
          metricsBindAddress: "0",
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

    it("takes the copies with a deleted source, then lets the source go", async () => {
      await client.delete(ConfigMaps, { namespace: "default", name: "settings" });
      await eventually("copies and source are gone", async () => {
        const source = await client.get(ConfigMaps, { namespace: "default", name: "settings" });
        return (await copy("team-a")) === undefined && source === undefined;
      });
    });
  });
});
