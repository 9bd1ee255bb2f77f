import { strict as assert } from "node:assert";
import { fileURLToPath } from "node:url";
import { ConfigMaps, ApiClient, Manager } from "@tessera/runtime";
import { eventually, useControlPlane } from "@tessera/testenv";
import { __KIND__Reconciler } from "../src/controllers/__SINGULAR__.js";
import { __HANDLE__, __SINGULAR__Validator } from "../src/generated/index.js";

// dist/test/ -> the project's deploy/base/crds, wherever mocha runs from.
const crdDir = fileURLToPath(new URL("../../deploy/base/crds", import.meta.url));
// A real etcd, kube-apiserver and kube-controller-manager (for garbage
// collection) with the generated CRD installed, and the reconciler running in
// a manager in this process, in the mode its controller() declares (sharded:
// a ring of one member, its Lease and the coordinator's assignment, as on a
// cluster). Each case makes its own objects, so any one runs alone
// (mocha --grep) and in any order. The reconciler's decisions, one reconcile
// at a time and in milliseconds, are tested on the fake client in
// __SINGULAR__.unit.test.ts.
describe("__KIND__Reconciler", function () {
  const env = useControlPlane({ controllerManager: true, crds: [crdDir] });
  let client: ApiClient;
  before(() => {
    client = new ApiClient(env.cp.kubeConfig, { fieldManager: "test" });
  });

  // Nested, so the manager stops before the control plane does.
  describe("with the reconciler running", function () {
    const stop = new AbortController();
    let running: Promise<void>;
    before(async () => {
      const manager = await Manager.create({
        kubeConfig: env.cp.kubeConfig,
        config: {
          name: "__NAME__",
          namespace: "default",
          healthBindAddress: "0",
          metricsBindAddress: "0",
          logLevel: "warn",
        },
        env: {},
      });
      manager.register(__KIND__Reconciler);
      running = manager.run(stop.signal);
    });
    after(async () => {
      stop.abort();
      await running;
    });

    it("keeps a ConfigMap with spec.data and reports Ready", async () => {
      await client.create(__HANDLE__, {
        metadata: { name: "first", namespace: "default" },
        spec: { data: { greeting: "hello" } },
      });
      await eventually("the ConfigMap holds spec.data", async () => {
        const cm = await client.get(ConfigMaps, { name: "first", namespace: "default" });
        return cm?.data?.["greeting"] === "hello";
      });
      await eventually("status says Ready with one key", async () => {
        const object = await client.get(__HANDLE__, { name: "first", namespace: "default" });
        const ready = object?.status?.conditions?.find((c) => c.type === "Ready");
        return ready?.status === "True" && object?.status?.keys === 1;
      });
    });

    it("follows a change of spec.data", async () => {
      await client.create(__HANDLE__, {
        metadata: { name: "second", namespace: "default" },
        spec: { data: { greeting: "hello" } },
      });
      await eventually("the ConfigMap holds spec.data", async () => {
        const cm = await client.get(ConfigMaps, { name: "second", namespace: "default" });
        return cm?.data?.["greeting"] === "hello";
      });
      await client.apply(__HANDLE__, {
        metadata: { name: "second", namespace: "default" },
        spec: { data: { greeting: "hello", farewell: "bye" } },
      });
      await eventually("the ConfigMap has both keys", async () => {
        const cm = await client.get(ConfigMaps, { name: "second", namespace: "default" });
        return cm?.data?.["farewell"] === "bye";
      });
    });

    it("lets the ConfigMap go with its owner (garbage collection)", async () => {
      await client.create(__HANDLE__, {
        metadata: { name: "third", namespace: "default" },
        spec: { data: { greeting: "hello" } },
      });
      await eventually("the ConfigMap exists", async () => {
        return (await client.get(ConfigMaps, { name: "third", namespace: "default" })) !== undefined;
      });
      await client.delete(__HANDLE__, { name: "third", namespace: "default" });
      await eventually("the ConfigMap is gone", async () => {
        return (await client.get(ConfigMaps, { name: "third", namespace: "default" })) === undefined;
      });
    });

    it("is refused by the API server with the paths the generated validator reports", async () => {
      const bad = { metadata: { name: "bad", namespace: "default" }, spec: { paused: "yes" } } as never;
      const { violations } = __SINGULAR__Validator.validate(bad);
      assert.deepEqual(
        violations.map((v) => v.path),
        ["spec.paused"],
      );
      await assert.rejects(client.create(__HANDLE__, bad), (err: Error) =>
        err.message.includes("spec.paused"),
      );
    });
  });
});
