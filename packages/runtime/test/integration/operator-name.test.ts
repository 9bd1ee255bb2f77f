// An operator that elects a leader or runs a ring needs a name of its own:
// with the default one, two operators in a namespace would share a Lease, a
// ring and a field manager. The manager refuses such an operator at `run`,
// before it starts anything, and says where to set the name.
import { strict as assert } from "node:assert";
import { useControlPlane } from "@tessera/testenv";
import { ConfigMaps, Leases } from "@tessera/client";
import { ApiClient, Manager, type ManagerConfigInput } from "../../src/index.js";
import { ConfigError } from "../../src/config.js";
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

  /** What `run` ends with: its error, or "started" once caches synced (then it is stopped). */
  async function outcome(manager: Manager): Promise<unknown> {
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    const ended = running.then(
      () => "stopped",
      (error: unknown) => error,
    );
    // A failed start resolves waitForSync with false before run rejects: then run's error is the outcome.
    const result = await Promise.race([
      ended,
      manager.waitForSync(stop.signal).then((synced) => (synced ? "started" : ended)),
    ]);
    stop.abort();
    await ended;
    return result;
  }

  it("refuses to start an unnamed sharded operator, saying where to set the name, and creates nothing", async () => {
    const ns = await createNamespace(env.cp, "unnamed");
    const unnamed = await manager(ns, { mode: "sharded" });
    const error = await outcome(unnamed);
    assert.ok(error instanceof ConfigError, String(error));
    assert.equal(error.exitCode, 2);
    assert.match(error.message, /\/name: expected a name for this operator/);
    assert.match(error.message, /controller "widget" \(sharded\)/);
    assert.match(error.message, /Manager\.create\(\{ config: \{ name: "my-operator" \} \}\)/);
    assert.match(error.message, /name: in the config file/);
    assert.match(error.message, /TESSERA_NAME/);
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
    assert.ok((await outcome(await manager(ns, {}))) instanceof ConfigError);

    const named = await manager(ns, { mode: "sharded" }, { TESSERA_NAME: "widgets" });
    assert.equal(await outcome(named), "started");
    assert.equal(named.config.name, "widgets");
  });
});
