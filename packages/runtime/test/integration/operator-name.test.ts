// An operator that elects a leader or runs a ring needs a name of its own:
// with the default one, two operators in a namespace would share a Lease, a
// ring and a field manager. The manager refuses such an operator at `run`,
// before it starts anything, and says where to set the name.
import { strict as assert } from "node:assert";
import { useControlPlane } from "@tessera/testenv";
import { ConfigMaps, Leases } from "@tessera/reflector";
import { ApiClient, ConfigError, Manager, type ManagerConfigInput } from "../../src/index.js";
import { Widgets } from "./widget.js";
import { createNamespace, installWidgetCrd } from "./support/widget-cluster.js";

describe("an operator's name (real API server)", function () {
  this.timeout(60_000);
  const env = useControlPlane();
  before(async () => installWidgetCrd(env.cp));

  const quiet: ManagerConfigInput = { healthBindAddress: "0", metricsBindAddress: "0", logLevel: "error" };

  async function manager(namespace: string, config: ManagerConfigInput, vars: Record<string, string> = {}) {
    const created = await Manager.create({
      config: { ...quiet, namespace, ...config },
      kubeConfig: env.cp.kubeConfig,
      env: vars,
    });
    created
      .controller()
      .for(Widgets)
      .complete(async () => {});
    return created;
  }

  it("refuses to start an unnamed sharded operator, saying where to set the name, and creates nothing", async () => {
    const ns = await createNamespace(env.cp, "unnamed");
    const unnamed = await manager(ns, { mode: "sharded" });
    await assert.rejects(unnamed.run(new AbortController().signal), (error: unknown) => {
      assert.ok(error instanceof ConfigError, String(error));
      assert.equal(error.exitCode, 2);
      assert.match(error.message, /\/name: expected a name for this operator/);
      assert.match(error.message, /controller "widget" \(sharded\)/);
      assert.match(error.message, /Manager\.create\(\{ config: \{ name: "my-operator" \} \}\)/);
      assert.match(error.message, /name: in the config file/);
      assert.match(error.message, /TESSERA_NAME/);
      return true;
    });
    assert.equal(unnamed.hasSynced(), false);
    // Refused before anything started: no member Lease, no ring assignment.
    const client = new ApiClient(env.cp.kubeConfig, { fieldManager: "test" });
    assert.deepEqual(await client.list(Leases, { namespace: ns }), []);
    assert.deepEqual(
      (await client.list(ConfigMaps, { namespace: ns })).filter(
        (c) => c.metadata?.name !== "kube-root-ca.crt",
      ),
      [],
    );
  });

  it("refuses an unnamed leader operator too, and starts one named by TESSERA_NAME", async () => {
    const ns = await createNamespace(env.cp, "named");
    await assert.rejects((await manager(ns, {})).run(new AbortController().signal), ConfigError);

    const named = await manager(ns, { mode: "sharded" }, { TESSERA_NAME: "widgets" });
    const stop = new AbortController();
    const running = named.run(stop.signal);
    try {
      assert.equal(await named.waitForSync(stop.signal), true);
    } finally {
      stop.abort();
      await running;
    }
    assert.equal(named.config.name, "widgets");
  });
});
