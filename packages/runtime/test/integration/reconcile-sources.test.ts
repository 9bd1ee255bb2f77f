// Where reconciles come from and what they read, against the real API
// server: ctx.owned and ctx.related, a timer and an event emitter as
// trigger sources, manager.enqueue, manager.reconcileAll, a watch of the
// primary kind with a mapping (one informer), and owns({ everyOwner }).
import { strict as assert } from "node:assert";
import { EventEmitter } from "node:events";
import { setInterval, setTimeout as sleep } from "node:timers/promises";
import { ConfigMaps, Secrets, type KubeObject } from "@tessera/client";
import { JsonLogger } from "@tessera/core";
import { eventually, useControlPlane } from "@tessera/testenv";
import type { V1ConfigMap } from "@kubernetes/client-node";
import { ApiClient, Manager, Tokens, type ManagerConfigInput, type Request } from "../../src/index.js";
import { Widgets, type Widget } from "./widget.js";
import { RunningManagers } from "./support/ring-members.js";
import { createNamespace, installWidgetCrd } from "./support/widget-cluster.js";

const managerConfig: ManagerConfigInput = {
  mode: "every-replica",
  healthBindAddress: "0",
  metricsBindAddress: "0",
  logLevel: "error",
};

/** A reference to `widget` in a child's ownerReferences. */
function ownerRef(widget: KubeObject, controller: boolean) {
  return {
    apiVersion: Widgets.apiVersion,
    kind: Widgets.kind,
    name: widget.metadata?.name ?? "",
    uid: widget.metadata?.uid ?? "",
    ...(controller ? { controller: true } : {}),
  };
}

describe("reconcile sources and reads (real API server)", function () {
  this.timeout(120_000);
  const env = useControlPlane();
  let api: ApiClient;
  before(async () => {
    await installWidgetCrd(env.cp);
    api = new ApiClient(env.cp.kubeConfig, { fieldManager: "tessera-test" });
  });

  async function running(manager: Manager, body: () => Promise<void>): Promise<void> {
    const stop = new AbortController();
    const run = manager.run(stop.signal);
    try {
      assert.ok(await manager.waitForSync(AbortSignal.timeout(60_000)), "the manager synced");
      await body();
    } finally {
      stop.abort();
      await run;
    }
  }

  it("ctx.owned finds the children controlled by the object, by the owner index; ctx.related reads a declared index", async () => {
    const ns = await createNamespace(env.cp, "owned");
    const w1 = await api.create(Widgets, {
      metadata: { name: "w1", namespace: ns },
      spec: { data: { secretName: "s" } },
    });
    const w2 = await api.create(Widgets, { metadata: { name: "w2", namespace: ns } });
    const child = (name: string, ownerReferences: object[]): V1ConfigMap => ({
      metadata: { name, namespace: ns, ownerReferences: ownerReferences as never },
    });
    await api.create(ConfigMaps, child("w1-a", [ownerRef(w1, true)]));
    await api.create(ConfigMaps, child("w1-b", [ownerRef(w1, true)]));
    await api.create(ConfigMaps, child("w1-not-controlled", [ownerRef(w1, false)]));
    await api.create(ConfigMaps, child("w2-a", [ownerRef(w2, true)]));
    await api.create(ConfigMaps, child("nobody", []));
    await api.create(Secrets, { metadata: { name: "s", namespace: ns } });
    const manager = await Manager.create({ config: managerConfig, kubeConfig: env.cp.kubeConfig, env: {} });
    const seen = new Map<string, { owned: string[]; related: string[]; errors: string[] }>();
    manager
      .controller()
      .named("owned-reader")
      .for(Widgets, {
        namespaces: ns,
        indexes: {
          "spec.secretName": (w: Widget) => (w.spec?.data?.["secretName"] ? [w.spec.data["secretName"]] : []),
        },
      })
      .owns(ConfigMaps, { namespaces: ns })
      .watches(Secrets, () => [], { namespaces: ns })
      .complete(async (request, ctx) => {
        const errors: string[] = [];
        for (const wrong of [() => ctx.owned(Secrets), () => ctx.related(Widgets, "spec.nothing", "x")]) {
          await wrong().then(
            () => errors.push("no error"),
            (error: Error) => errors.push(error.message),
          );
        }
        seen.set(request.name, {
          owned: (await ctx.owned(ConfigMaps)).map((c) => c.metadata?.name ?? "").sort(),
          related: (await ctx.related(Widgets, "spec.secretName", "s")).map((w) => w.metadata?.name ?? ""),
          errors,
        });
      });
    await running(manager, async () => {
      await eventually("both Widgets reconciled", () => seen.size === 2);
      assert.deepEqual(seen.get("w1")?.owned, ["w1-a", "w1-b"]);
      assert.deepEqual(seen.get("w2")?.owned, ["w2-a"]);
      assert.deepEqual(seen.get("w1")?.related, ["w1"]);
      const [notOwned, notIndexed] = seen.get("w1")?.errors ?? [];
      assert.match(notOwned ?? "", /ctx\.owned\(Secret \(v1\)\): the kind is not declared with owns\(\)/);
      assert.match(notIndexed ?? "", /no index "spec\.nothing" on the cache of widgets/);
      // The index follows the cache: a child made now is found by the next reconcile.
      seen.clear();
      await api.create(ConfigMaps, child("w2-b", [ownerRef(w2, true)]));
      await eventually("w2 reconciled for its new child", () => seen.has("w2"));
      assert.deepEqual(seen.get("w2")?.owned, ["w2-a", "w2-b"]);
    });
  });

  it("owns({ everyOwner: true }) wakes every owner of the primary kind; the default only the controller", async () => {
    const ns = await createNamespace(env.cp, "every-owner");
    const [a, b, c] = await Promise.all(
      ["a", "b", "c"].map((name) => api.create(Widgets, { metadata: { name, namespace: ns } })),
    );
    const manager = await Manager.create({ config: managerConfig, kubeConfig: env.cp.kubeConfig, env: {} });
    const every: string[] = [];
    const controllerOnly: string[] = [];
    manager
      .controller()
      .named("every-owner")
      .for(Widgets, { namespaces: ns })
      .owns(ConfigMaps, { namespaces: ns, everyOwner: true })
      .complete((request) => void every.push(request.name));
    manager
      .controller()
      .named("controller-owner")
      .for(Widgets, { namespaces: ns })
      .owns(ConfigMaps, { namespaces: ns })
      .complete((request) => void controllerOnly.push(request.name));
    await running(manager, async () => {
      await eventually("the Widgets reconciled", () => every.length >= 3 && controllerOnly.length >= 3);
      await sleep(300);
      every.length = 0;
      controllerOnly.length = 0;
      await api.create(ConfigMaps, {
        metadata: {
          name: "shared",
          namespace: ns,
          ownerReferences: [
            ownerRef(a as KubeObject, false),
            ownerRef(b as KubeObject, false),
            ownerRef(c as KubeObject, true),
          ] as never,
        },
      });
      await eventually("every owner woken", () => every.length >= 3);
      await eventually("the controller owner woken", () => controllerOnly.length >= 1);
      await sleep(500);
      assert.deepEqual([...new Set(every)].sort(), ["a", "b", "c"]);
      assert.deepEqual([...new Set(controllerOnly)], ["c"]);
    });
  });

  it("sharded: owns({ everyOwner: true }) is cached whole, so a child no member labelled wakes each owner it names", async () => {
    const ns = await createNamespace(env.cp, "every-owner-sharded");
    const [a, b] = await Promise.all(
      ["a", "b"].map((name) => api.create(Widgets, { metadata: { name, namespace: ns } })),
    );
    const manager = await Manager.create({
      config: {
        ...managerConfig,
        mode: "sharded",
        name: "every-owner-sharded",
        namespace: ns,
        identity: "member-a",
        leaderElection: { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500 },
      },
      kubeConfig: env.cp.kubeConfig,
      env: {},
    });
    const every: string[] = [];
    manager
      .controller()
      .named("every-owner")
      .for(Widgets, { namespaces: ns })
      .owns(ConfigMaps, { namespaces: ns, everyOwner: true })
      .complete((request) => void every.push(request.name));
    await running(manager, async () => {
      await eventually("the Widgets reconciled", () => every.includes("a") && every.includes("b"), 30_000);
      every.length = 0;
      // Written by someone else: two owners, neither the controller, no owner-slot label.
      await api.create(ConfigMaps, {
        metadata: {
          name: "shared",
          namespace: ns,
          ownerReferences: [ownerRef(a as KubeObject, false), ownerRef(b as KubeObject, false)] as never,
        },
      });
      await eventually("both owners woken", () => every.includes("a") && every.includes("b"));
    });
  });

  it("a timer and an event emitter trigger reconciles; manager.enqueue queues one from anywhere and names the controllers it knows", async () => {
    const ns = await createNamespace(env.cp, "triggers");
    const logged: string[] = [];
    const manager = await Manager.create({
      config: managerConfig,
      kubeConfig: env.cp.kubeConfig,
      env: {},
      logger: new JsonLogger({ level: "error", write: (line) => logged.push(line) }),
    });
    const reconciled: string[] = [];
    const timerStop = new AbortController();
    async function* everyTick(signal: AbortSignal): AsyncGenerator<Request> {
      for await (const _ of setInterval(100, undefined, { signal })) yield { namespace: ns, name: "tick" };
    }
    const webhook = new EventEmitter();
    manager
      .controller()
      .named("triggered")
      .for(ConfigMaps, { namespaces: ns })
      .triggers(everyTick(timerStop.signal))
      .triggers(webhook, { event: "changed" })
      .complete((request) => void reconciled.push(request.name));
    assert.throws(
      () => manager.enqueue("triggered", { namespace: ns, name: "early" }),
      /manager.enqueue\("triggered"\): the manager has not built its controllers yet; call it while the manager runs, after await manager.waitForSync\(\)/,
    );
    await running(manager, async () => {
      await eventually(
        "the timer triggers reconciles",
        () => reconciled.filter((n) => n === "tick").length >= 3,
      );
      timerStop.abort();
      webhook.emit("changed", { namespace: ns, name: "from-webhook" });
      webhook.emit("changed", { nonsense: true });
      assert.equal(manager.enqueue("triggered", { namespace: ns, name: "enqueued" }), true);
      await eventually(
        "the emitter's and enqueue's requests reconciled",
        () => reconciled.includes("from-webhook") && reconciled.includes("enqueued"),
      );
      assert.throws(
        () => manager.enqueue("no-such", { namespace: ns, name: "x" }),
        /manager.enqueue\("no-such"\): no controller is named "no-such"; this manager runs "triggered"/,
      );
      assert.throws(
        () => manager.enqueue("triggered", { namespace: ns } as Request),
        /a request needs a name/,
      );
      assert.deepEqual(
        logged.map((line) => (JSON.parse(line) as { msg: string }).msg),
        ['trigger source: a request needs a name, got {"nonsense":true}; the value is skipped'],
        "the value that is no request is logged; the timer's end is no failure",
      );
      // The timer stopped: no more ticks.
      await sleep(300);
      const ticks = reconciled.filter((n) => n === "tick").length;
      await sleep(400);
      assert.equal(reconciled.filter((n) => n === "tick").length, ticks, "no tick after the source ended");
    });
  });

  it("manager.reconcileAll queues every cached object of the primary kind, once each", async () => {
    const ns = await createNamespace(env.cp, "reconcile-all");
    const names = Array.from({ length: 40 }, (_, i) => `cm-${i}`);
    await Promise.all(names.map((name) => api.create(ConfigMaps, { metadata: { name, namespace: ns } })));
    const manager = await Manager.create({ config: managerConfig, kubeConfig: env.cp.kubeConfig, env: {} });
    const reconciled: string[] = [];
    manager
      .controller()
      .named("all")
      .for(ConfigMaps, { namespaces: ns })
      .complete((request) => void reconciled.push(request.name));
    await running(manager, async () => {
      await eventually("the initial list reconciled", () => new Set(reconciled).size === names.length);
      await sleep(300);
      reconciled.length = 0;
      assert.equal(manager.reconcileAll("all"), names.length);
      await eventually("every object reconciled again", () => reconciled.length >= names.length);
      await sleep(300);
      assert.deepEqual([...reconciled].sort(), [...names].sort(), "each once");
    });
  });

  it("watches() of the primary kind maps a ConfigMap to the one it points at, on the primary's one informer", async () => {
    const ns = await createNamespace(env.cp, "self-watch");
    await api.create(ConfigMaps, { metadata: { name: "target", namespace: ns } });
    const manager = await Manager.create({ config: managerConfig, kubeConfig: env.cp.kubeConfig, env: {} });
    const reconciled: string[] = [];
    manager
      .controller()
      .named("pointers")
      .for(ConfigMaps, { namespaces: ns })
      .watches(ConfigMaps, (cm: V1ConfigMap) =>
        cm.data?.["points-at"]
          ? [{ namespace: cm.metadata?.namespace ?? "", name: cm.data["points-at"] }]
          : [],
      )
      .complete((request) => void reconciled.push(request.name));
    await running(manager, async () => {
      await eventually("the target reconciled", () => reconciled.includes("target"));
      await sleep(300);
      reconciled.length = 0;
      await api.create(ConfigMaps, {
        metadata: { name: "pointer", namespace: ns },
        data: { "points-at": "target" },
      });
      await eventually("the pointer and its target reconciled", () =>
        ["pointer", "target"].every((n) => reconciled.includes(n)),
      );
      const informers = manager
        .get(Tokens.InformerFactory)
        .informers.filter((i) => i.resource.startsWith("configmaps"));
      assert.equal(informers.length, 1, `one ConfigMap informer: ${informers.map((i) => i.name).join(", ")}`);
    });
  });

  it("controllers.<name>.maxIntervalMs in the configuration sets the resync floor over the declaration's (0: off)", async () => {
    const ns = await createNamespace(env.cp, "max-interval");
    await api.create(ConfigMaps, { metadata: { name: "c", namespace: ns } });
    const manager = await Manager.create({
      config: { ...managerConfig, controllers: { resynced: { maxIntervalMs: 1_000 } } },
      kubeConfig: env.cp.kubeConfig,
      env: {},
    });
    const counts = { resynced: 0, off: 0 };
    for (const name of ["resynced", "off"] as const) {
      manager
        .controller()
        .named(name)
        .for(ConfigMaps, { namespaces: ns })
        .withOptions({ maxIntervalMs: 0 })
        .complete(() => void counts[name]++);
    }
    await running(manager, async () => {
      await sleep(4_500);
      assert.ok(
        counts.resynced >= 3,
        `the configured floor of 1 s reconciled ${counts.resynced} times in 4.5 s`,
      );
      assert.equal(counts.off, 1, "maxIntervalMs 0: the initial list only");
    });
  });

  it("sharded: a trigger and enqueue reach only the replica holding the key's slot, each request reconciled once", async () => {
    const ns = await createNamespace(env.cp, "sharded-triggers");
    const names = Array.from({ length: 30 }, (_, i) => `w${i}`);
    await Promise.all(names.map((name) => api.create(Widgets, { metadata: { name, namespace: ns } })));
    const webhook = new EventEmitter();
    const seen: Array<{ member: string; name: string; found: boolean }> = [];
    const managers = new Map<string, Manager>();
    const members = new RunningManagers();
    const member = async (identity: string) => {
      const manager = await Manager.create({
        config: {
          ...managerConfig,
          mode: "sharded",
          name: "sharded-triggers",
          namespace: ns,
          identity,
          leaderElection: { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500 },
        },
        kubeConfig: env.cp.kubeConfig,
        env: {},
      });
      manager
        .controller()
        .named("widgets")
        .for(Widgets, { namespaces: ns })
        .triggers(webhook)
        .complete((request, ctx) => {
          seen.push({ member: identity, name: request.name, found: ctx.current() !== undefined });
        });
      managers.set(identity, manager);
      await members.start(manager);
    };
    try {
      await member("member-a");
      await member("member-b");
      const holders = () => new Set(seen.filter((r) => r.found).map((r) => r.member));
      await eventually("both members reconcile their share", () => holders().size === 2, 30_000);
      await eventually("every Widget reconciled", () => names.every((n) => seen.some((r) => r.name === n)));
      // Let the handover settle: no reconcile for a second.
      let count = -1;
      await eventually("the ring settled", async () => {
        const settled = count === seen.length;
        count = seen.length;
        await sleep(1_000);
        return settled;
      });
      seen.length = 0;
      for (const name of names) webhook.emit("request", { namespace: ns, name });
      await eventually("each trigger request reconciled", () =>
        names.every((n) => seen.some((r) => r.name === n)),
      );
      const queued = [...managers.values()].map((m) => m.enqueue("widgets", { namespace: ns, name: "w0" }));
      await sleep(1_000);
      assert.deepEqual(
        seen.filter((r) => !r.found).map((r) => `${r.member} ${r.name}`),
        [],
        "no member reconciled an object outside its slots",
      );
      for (const name of names.slice(1)) {
        assert.equal(seen.filter((r) => r.name === name).length, 1, `${name} reconciled once, by one member`);
      }
      assert.deepEqual(
        queued.filter(Boolean).length,
        1,
        `enqueue queued on one member: ${JSON.stringify(queued)}`,
      );
      assert.equal(
        seen.filter((r) => r.name === "w0").length,
        2,
        "w0: once for the trigger, once for enqueue",
      );
      assert.equal(new Set(seen.map((r) => r.member)).size, 2, "both members reconciled trigger requests");
    } finally {
      await members.stopAll();
    }
  });
});
