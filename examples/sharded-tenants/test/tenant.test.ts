import { strict as assert } from "node:assert";
import { fileURLToPath } from "node:url";
import { ConfigMaps, ServiceAccounts, ApiClient, Manager } from "@tessera/runtime";
import { eventually, useControlPlane } from "@tessera/testenv";
import { TenantReconciler } from "../src/controllers/tenant.js";
import { Tenants, tenantValidator } from "../src/generated/index.js";

// dist/test/ -> the project's deploy/base/crds, wherever mocha runs from.
const crdDir = fileURLToPath(new URL("../../deploy/base/crds", import.meta.url));
// A real etcd, kube-apiserver and kube-controller-manager with the generated
// CRD installed, and two replicas of the operator (two managers in this
// process) sharing the Tenants between them.
describe("TenantReconciler, sharded over two replicas", function () {
  const env = useControlPlane({ controllerManager: true, crds: [crdDir] });
  let client: ApiClient;
  before(() => {
    client = new ApiClient(env.cp.kubeConfig, { fieldManager: "test" });
  });

  const ready = async (name: string, generation?: number) => {
    const tenant = await client.get(Tenants, { name, namespace: "default" });
    const condition = tenant?.status?.conditions?.find((c) => c.type === "Ready");
    return (
      condition?.status === "True" &&
      (generation === undefined || tenant?.status?.observedGeneration === generation)
    );
  };
  const names = Array.from({ length: 20 }, (_, i) => `team-${i}`);

  describe("with the replicas running", function () {
    const replicas = ["replica-a", "replica-b"].map((identity) => ({
      identity,
      stop: new AbortController(),
    }));
    const running: Promise<void>[] = [];
    before(async () => {
      for (const replica of replicas) {
        const manager = await Manager.create({
          kubeConfig: env.cp.kubeConfig,
          config: {
            name: "sharded-tenants",
            identity: replica.identity,
            namespace: "default",
            mode: "sharded",
            healthBindAddress: "0",
            metricsBindAddress: "0",
            logLevel: "error",
          },
          env: {},
        });
        manager.register(TenantReconciler);
        running.push(manager.run(replica.stop.signal));
      }
    });
    after(async () => {
      for (const replica of replicas) replica.stop.abort();
      await Promise.all(running);
    });

    it("gives every Tenant its ConfigMap and ServiceAccount and reports Ready", async () => {
      for (const name of names) {
        await client.create(Tenants, {
          metadata: { name, namespace: "default" },
          spec: { displayName: `Team ${name}`, owners: ["alice"] },
        });
      }
      for (const name of names) {
        await eventually(`${name} is Ready`, () => ready(name));
        const settings = await client.get(ConfigMaps, { name: `tenant-${name}`, namespace: "default" });
        assert.deepEqual(settings?.data, { displayName: `Team ${name}`, tier: "free", owners: "alice" });
        assert.ok(await client.get(ServiceAccounts, { name: `tenant-${name}`, namespace: "default" }));
      }
    });

    it("after one replica stops, the other reconciles every change", async () => {
      replicas[0]!.stop.abort();
      await running[0];
      for (const name of names) {
        await client.apply(
          Tenants,
          {
            metadata: { name, namespace: "default" },
            spec: { displayName: `Team ${name}`, tier: "team", owners: ["alice"] },
          },
          { force: true }, // the create above owns spec.tier as an update
        );
      }
      for (const name of names) {
        const generation = (await client.get(Tenants, { name, namespace: "default" }))?.metadata?.generation;
        await eventually(`${name} is Ready at generation ${generation}`, () => ready(name, generation));
        const settings = await client.get(ConfigMaps, { name: `tenant-${name}`, namespace: "default" });
        assert.equal(settings?.data?.["tier"], "team");
      }
    });

    it("lets a deleted Tenant's objects go with it (garbage collection)", async () => {
      await client.delete(Tenants, { name: "team-0", namespace: "default" });
      await eventually("team-0's ConfigMap and ServiceAccount are gone", async () => {
        const cm = await client.get(ConfigMaps, { name: "tenant-team-0", namespace: "default" });
        const sa = await client.get(ServiceAccounts, { name: "tenant-team-0", namespace: "default" });
        return cm === undefined && sa === undefined;
      });
    });
  });

  it("is refused by the API server with the paths the generated validator reports", async () => {
    const bad = { metadata: { name: "bad", namespace: "default" }, spec: { tier: "gold" } } as never;
    const paths = tenantValidator.validate(bad).violations.map((v) => v.path);
    assert.deepEqual(paths.sort(), ["spec.displayName", "spec.tier"]);
    await assert.rejects(
      client.create(Tenants, bad),
      (err: Error) => err.message.includes("spec.tier") && err.message.includes("spec.displayName"),
    );
  });
});
