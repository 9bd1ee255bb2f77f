// Read your own writes against the real API server: after the manager's
// client writes an object, its cached read returns the written version.
import { strict as assert } from "node:assert";
import { ConfigMaps } from "@tessera/client";
import { parsePrometheusText, useControlPlane } from "@tessera/testenv";
import { Manager, Tokens } from "../../src/index.js";
import { createNamespace, installWidgetCrd } from "./support/widget-cluster.js";
import { Widgets } from "./widget.js";

describe("read your own writes (real API server)", function () {
  this.timeout(120_000);
  const env = useControlPlane();
  before(async () => installWidgetCrd(env.cp));

  /**
   * Runs a manager caching the ConfigMaps of `ns`, writes one ConfigMap
   * `rounds` times through the manager's client, reading it back from the
   * cache right after each write; returns how many reads returned an older
   * version than the write's, and the waits metric's samples.
   */
  async function writeThenRead(ns: string, readYourWritesMs: number, rounds: number) {
    const manager = await Manager.create({
      config: {
        mode: "every-replica",
        healthBindAddress: "0",
        metricsBindAddress: "127.0.0.1:0",
        logLevel: "error",
        cache: { readYourWritesMs },
      },
      kubeConfig: env.cp.kubeConfig,
      env: {},
    });
    manager
      .controller()
      .for(Widgets)
      .owns(ConfigMaps, { namespaces: ns })
      .complete(() => undefined);
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    try {
      assert.ok(await manager.waitForSync(AbortSignal.timeout(60_000)), "the manager synced");
      const client = manager.get(Tokens.Client);
      let stale = 0;
      let listedStale = 0;
      for (let i = 0; i < rounds; i++) {
        const written = await client.apply(
          ConfigMaps,
          { metadata: { name: "counter", namespace: ns }, data: { round: String(i) } },
          { force: true },
        );
        const read = await client.get(ConfigMaps, { namespace: ns, name: "counter" });
        if (read?.metadata?.resourceVersion !== written.metadata?.resourceVersion) stale++;
        else assert.equal(read?.data?.["round"], String(i));
        // A list of the namespace waits for the pending writes in it too.
        const again = await client.apply(
          ConfigMaps,
          { metadata: { name: "counter", namespace: ns }, data: { round: `${i}-listed` } },
          { force: true },
        );
        const listed = (await client.list(ConfigMaps, { namespace: ns })).find(
          (cm) => cm.metadata?.name === "counter",
        );
        if (listed?.metadata?.resourceVersion !== again.metadata?.resourceVersion) listedStale++;
      }
      const { metrics } = await manager.endpoints();
      const samples =
        parsePrometheusText(await (await fetch(`http://127.0.0.1:${metrics!.port}/metrics`)).text()).get(
          "tessera_client_read_your_writes_waits_total",
        )?.samples ?? [];
      const waits = (outcome: string) => samples.find((s) => s.labels["outcome"] === outcome)?.value ?? -1;
      return { stale, listedStale, seen: waits("seen"), timeout: waits("timeout") };
    } finally {
      stop.abort();
      await running;
    }
  }

  it("a cached get and list right after a write return the written version, and the waits are counted", async () => {
    const ns = await createNamespace(env.cp, "ryow-on");
    const rounds = 20;
    const on = await writeThenRead(ns, 10_000, rounds);
    assert.equal(on.stale, 0, "every get returned the version just written");
    assert.equal(on.listedStale, 0, "every list returned the version just written");
    assert.equal(on.timeout, 0, "no read waited until its deadline");
    // Each wait is a read the cache would have answered with the version before the write.
    assert.ok(on.seen >= 1, `reads waited for the cache (${on.seen} of ${2 * rounds})`);

    // Off: the same reads are not held, and the series is there at zero.
    const offNs = await createNamespace(env.cp, "ryow-off");
    const off = await writeThenRead(offNs, 0, rounds);
    assert.equal(off.seen, 0);
    assert.equal(off.timeout, 0);
    // Without the wait some reads see the older version (how many depends on the machine's load).
    console.log(
      `      read your writes off: ${off.stale + off.listedStale} of ${2 * rounds} reads returned the older version; on: ${on.seen} waited`,
    );
  });

  it("a write of an object no cache holds makes its read wait once, until the deadline, counted as a timeout", async () => {
    const ns = await createNamespace(env.cp, "ryow-elsewhere");
    const manager = await Manager.create({
      config: {
        mode: "every-replica",
        healthBindAddress: "0",
        metricsBindAddress: "127.0.0.1:0",
        logLevel: "error",
        cache: { readYourWritesMs: 300 },
      },
      kubeConfig: env.cp.kubeConfig,
      env: {},
    });
    manager
      .controller()
      .for(Widgets)
      .owns(ConfigMaps, { namespaces: ns, labels: { cached: "yes" } })
      .complete(() => undefined);
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    try {
      assert.ok(await manager.waitForSync(AbortSignal.timeout(60_000)), "the manager synced");
      const client = manager.get(Tokens.Client);
      // Outside the cache's label selector: the cache never delivers it.
      await client.create(ConfigMaps, { metadata: { name: "unlabelled", namespace: ns } });
      const started = performance.now();
      assert.equal(await client.get(ConfigMaps, { namespace: ns, name: "unlabelled" }), undefined);
      const waited = performance.now() - started;
      assert.ok(waited >= 250, `the read waited for the deadline (${waited.toFixed(0)} ms)`);
      // A second read does not wait again.
      const again = performance.now();
      await client.get(ConfigMaps, { namespace: ns, name: "unlabelled" });
      assert.ok(performance.now() - again < 250, "the expectation was dropped at its deadline");
      const { metrics } = await manager.endpoints();
      const samples =
        parsePrometheusText(await (await fetch(`http://127.0.0.1:${metrics!.port}/metrics`)).text()).get(
          "tessera_client_read_your_writes_waits_total",
        )?.samples ?? [];
      assert.equal(samples.find((s) => s.labels["outcome"] === "timeout")?.value, 1);
    } finally {
      stop.abort();
      await running;
    }
  });
});
