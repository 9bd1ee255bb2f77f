// Mapping functions of watches() against the real API server: an async
// mapper that reads a declared index through its context, the order its
// events are mapped in, and a mapper that throws or rejects.
import { strict as assert } from "node:assert";
import { setTimeout as sleep } from "node:timers/promises";
import { JsonLogger } from "@tessera/core";
import { Secrets } from "@tessera/client";
import { eventually, useControlPlane } from "@tessera/testenv";
import { ApiClient, Manager, requestOf, type MapToRequests } from "../../src/index.js";
import { Widgets, type Widget } from "./widget.js";
import { createNamespace, installWidgetCrd } from "./support/widget-cluster.js";
import type { V1Secret } from "@kubernetes/client-node";

/** The Secret a Widget names: its spec.data.secretName. */
const secretOf = (w: Widget): string[] => (w.spec?.data?.["secretName"] ? [w.spec.data["secretName"]] : []);

describe("watches() mapping functions (real API server)", function () {
  this.timeout(120_000);
  const env = useControlPlane();
  before(async () => installWidgetCrd(env.cp));

  const managerConfig = {
    mode: "every-replica",
    healthBindAddress: "0",
    metricsBindAddress: "0",
    logLevel: "error",
  } as const;

  it("an async mapper lists the Widgets that name a Secret by a declared index; a mapper that throws or rejects is logged and its event dropped", async () => {
    const ns = await createNamespace(env.cp, "mappers");
    const api = new ApiClient(env.cp.kubeConfig, { fieldManager: "tessera-test" });
    const widget = (name: string, secretName: string): Widget => ({
      metadata: { name, namespace: ns },
      spec: { data: { secretName } },
    });
    await api.create(Widgets, widget("w1", "shared"));
    await api.create(Widgets, widget("w2", "shared"));
    await api.create(Widgets, widget("w3", "own"));
    const logged: string[] = [];
    const manager = await Manager.create({
      config: managerConfig,
      kubeConfig: env.cp.kubeConfig,
      env: {},
      logger: new JsonLogger({ level: "error", write: (line) => logged.push(line) }),
    });
    const reconciled: string[] = [];
    const widgetsNaming: MapToRequests<V1Secret> = async (secret, { client, signal }) => {
      if (secret.metadata?.name === "throws") throw new Error("this Secret is refused at once");
      if (secret.metadata?.name === "rejects") {
        await sleep(10);
        throw new Error("this Secret is refused later");
      }
      return (
        await client.list(Widgets, {
          namespace: secret.metadata?.namespace ?? "",
          index: { name: "spec.secretName", value: secret.metadata?.name ?? "" },
          signal,
        })
      ).map(requestOf);
    };
    manager
      .controller()
      .named("secret-mapper")
      .for(Widgets, { indexes: { "spec.secretName": secretOf } })
      .watches(Secrets, widgetsNaming, { namespaces: ns })
      .complete((request) => void reconciled.push(request.name));
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    try {
      assert.ok(await manager.waitForSync(AbortSignal.timeout(60_000)), "the manager synced");
      await eventually("the Widgets are reconciled once each", () => reconciled.length >= 3);
      await sleep(300);
      reconciled.length = 0;

      // A Secret wakes exactly the Widgets whose spec names it.
      await api.create(Secrets, { metadata: { name: "shared", namespace: ns } });
      await eventually("w1 and w2 reconciled for the Secret", () => reconciled.length >= 2);
      await sleep(300);
      assert.deepEqual(reconciled.sort(), ["w1", "w2"]);
      reconciled.length = 0;

      // Mappers that throw and reject: logged with the object's key and the controller; nothing crashes.
      await api.create(Secrets, { metadata: { name: "throws", namespace: ns } });
      await api.create(Secrets, { metadata: { name: "rejects", namespace: ns } });
      await api.create(Secrets, { metadata: { name: "own", namespace: ns } });
      await eventually("w3 reconciled for its Secret, after the failures", () => reconciled.includes("w3"));
      await sleep(300);
      assert.deepEqual(reconciled, ["w3"], "the failed events woke nothing");
      const failures = logged.filter((line) => line.includes("event handler failed"));
      for (const [name, message] of [
        ["throws", "refused at once"],
        ["rejects", "refused later"],
      ] as const) {
        assert.ok(
          failures.some(
            (line) =>
              line.includes(`"key":"${ns}/${name}"`) &&
              line.includes('"handler":"secret-mapper-watch-1"') &&
              line.includes(
                `controller secret-mapper: the mapping function of secrets failed, the event is dropped: this Secret is ${message}`,
              ),
          ),
          `${name} is logged:\n${failures.join("\n") || "nothing logged"}`,
        );
      }

      // The index follows the Widgets: a Widget that starts naming a Secret is found for its next event.
      await api.patch(
        Widgets,
        { namespace: ns, name: "w3" },
        { type: "merge", patch: { spec: { data: { secretName: "shared" } } } },
      );
      await sleep(300);
      reconciled.length = 0;
      await api.patch(
        Secrets,
        { namespace: ns, name: "shared" },
        { type: "merge", patch: { metadata: { labels: { touched: "yes" } } } },
      );
      await eventually("w1, w2 and w3 reconciled for the Secret", () => reconciled.length >= 3);
      await sleep(300);
      assert.deepEqual(reconciled.sort(), ["w1", "w2", "w3"]);
    } finally {
      stop.abort();
      await running;
    }
  });

  it("maps one source's events one at a time, in the order they happened, however long each mapping takes", async () => {
    const ns = await createNamespace(env.cp, "mappers-order");
    const api = new ApiClient(env.cp.kubeConfig, { fieldManager: "tessera-test" });
    const manager = await Manager.create({
      config: managerConfig,
      kubeConfig: env.cp.kubeConfig,
      env: {},
      logger: new JsonLogger({ level: "error", write: () => undefined }),
    });
    const trace: string[] = [];
    let running = 0;
    let overlapped = false;
    manager
      .controller()
      .named("ordered-mapper")
      .for(Widgets)
      .watches(
        Secrets,
        async (secret) => {
          const name = secret.metadata?.name ?? "";
          if (++running > 1) overlapped = true;
          trace.push(`start ${name}`);
          // The first events take longest: mapped concurrently, they would finish last.
          await sleep(Math.max(0, 120 - 20 * Number(name.slice(1))));
          trace.push(`end ${name}`);
          running--;
          return [];
        },
        { namespaces: ns },
      )
      .complete(() => undefined);
    const stop = new AbortController();
    const runningManager = manager.run(stop.signal);
    try {
      assert.ok(await manager.waitForSync(AbortSignal.timeout(60_000)), "the manager synced");
      const names = ["s0", "s1", "s2", "s3", "s4", "s5"];
      for (const name of names) await api.create(Secrets, { metadata: { name, namespace: ns } });
      await eventually("every Secret mapped", () => trace.filter((t) => t.startsWith("end")).length === 6);
      assert.equal(overlapped, false, `mappings overlapped: ${trace.join(", ")}`);
      assert.deepEqual(
        trace,
        names.flatMap((n) => [`start ${n}`, `end ${n}`]),
      );
    } finally {
      stop.abort();
      await runningManager;
    }
  });
});
