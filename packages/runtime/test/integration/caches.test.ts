// Declared caches against the real API server: what a controller's cache
// options make the manager cache, indexes read through the client, and the
// errors of a read the caches cannot serve.
import { strict as assert } from "node:assert";
import { JsonLogger, silentLogger } from "@tessera/core";
import { ApiError, ConfigMaps, Secrets, ServiceAccounts } from "@tessera/client";
import type { V1ConfigMap } from "@kubernetes/client-node";
import { eventually, parsePrometheusText, useControlPlane } from "@tessera/testenv";
import { ApiClient, Manager, Tokens } from "../../src/index.js";
import { BuilderError } from "../../src/codegen.js";
import { Widgets } from "./widget.js";
import { createNamespace, installWidgetCrd } from "./support/widget-cluster.js";

const byOwner = (cm: V1ConfigMap) => (cm.data?.["owner"] ? [cm.data["owner"]] : []);

describe("declared caches (real API server)", function () {
  this.timeout(120_000);
  const env = useControlPlane();
  before(async () => installWidgetCrd(env.cp));

  const managerConfig = {
    mode: "every-replica",
    healthBindAddress: "0",
    metricsBindAddress: "0",
    logLevel: "error",
  } as const;

  it("caches only what owns(..., { labels }) selects, lists by a declared index, and names what to declare otherwise", async () => {
    const ns = await createNamespace(env.cp, "caches");
    const other = await createNamespace(env.cp, "caches-other");
    const secretsA = await createNamespace(env.cp, "caches-sa");
    const api = new ApiClient(env.cp.kubeConfig, { fieldManager: "tessera-test" });
    const made = (name: string, owner: string): V1ConfigMap => ({
      metadata: { name, namespace: ns, labels: { "app.kubernetes.io/managed-by": "widgets" } },
      data: { owner },
    });
    for (const [name, owner] of [
      ["w1-a", "w1"],
      ["w1-b", "w1"],
      ["w2-a", "w2"],
    ] as const) {
      await api.create(ConfigMaps, made(name, owner));
    }
    // Unrelated ConfigMaps, here and elsewhere: never cached.
    for (let i = 0; i < 6; i++) {
      await api.create(ConfigMaps, { metadata: { name: `unrelated-${i}`, namespace: i % 2 ? ns : other } });
    }
    const logged: string[] = [];
    const manager = await Manager.create({
      config: managerConfig,
      kubeConfig: env.cp.kubeConfig,
      env: {},
      logger: new JsonLogger({ level: "error", write: (line) => logged.push(line) }),
    });
    manager
      .controller()
      .for(Widgets)
      .owns(ConfigMaps, {
        labels: { "app.kubernetes.io/managed-by": "widgets" },
        compact: true,
        indexes: {
          "data.owner": byOwner,
          // Throws on the w2 objects: they are logged and left out of this index only.
          strict: (cm) => {
            if (cm.data?.["owner"] === "w2") throw new Error("w2 is not allowed here");
            return byOwner(cm);
          },
        },
      })
      .watches(Secrets, () => [], { namespaces: [secretsA] })
      .complete(() => undefined);
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    try {
      assert.ok(await manager.waitForSync(AbortSignal.timeout(60_000)), "the manager synced");
      const client = manager.get(Tokens.Client);

      // What is cached: the labelled ConfigMaps of the whole cluster, none of the others.
      const total = (await api.list(ConfigMaps)).length;
      const labelled = (await api.list(ConfigMaps, { labels: "app.kubernetes.io/managed-by=widgets" }))
        .length;
      const informers = manager
        .get(Tokens.InformerFactory)
        .informers.filter((i) => i.resource === "configmaps");
      assert.equal(informers.length, 1, informers.map((i) => i.name).join(", "));
      assert.equal(informers[0]!.lister.size, labelled, `${labelled} labelled of ${total} ConfigMaps`);
      // The kind declared compact is; another is not, by default.
      assert.equal(informers[0]!.compact, true, "owns(ConfigMaps, { compact: true }) is compact");
      const secrets = manager.get(Tokens.InformerFactory).informers.filter((i) => i.resource === "secrets");
      assert.deepEqual(
        secrets.map((i) => i.compact),
        [false],
        "watches(Secrets) is not compact by default",
      );
      assert.ok(labelled >= 3 && total >= labelled + 6, `${labelled} of ${total}`);
      assert.deepEqual(
        (await client.list(ConfigMaps, { namespace: ns })).map((o) => o.metadata?.name).sort(),
        ["w1-a", "w1-b", "w2-a"],
      );

      // The declared index, by name and by the field it is named for; metadata.* need none.
      const w1 = await client.list(ConfigMaps, { index: { name: "data.owner", value: "w1" } });
      assert.deepEqual(w1.map((o) => o.metadata?.name).sort(), ["w1-a", "w1-b"]);
      const w2 = await client.list(ConfigMaps, { namespace: ns, fields: { "data.owner": "w2" } });
      assert.deepEqual(
        w2.map((o) => o.metadata?.name),
        ["w2-a"],
      );
      assert.deepEqual(
        (await client.list(ConfigMaps, { namespace: other, fields: { "data.owner": "w2" } })).length,
        0,
      );
      const named = await client.list(ConfigMaps, {
        fields: { "metadata.namespace": ns, "metadata.name": "w1-b" },
      });
      assert.deepEqual(
        named.map((o) => o.metadata?.name),
        ["w1-b"],
      );
      // The cache follows: a new object is in the index once the watch brings it.
      await api.create(ConfigMaps, made("w2-b", "w2"));
      await eventually(
        "w2-b is indexed",
        async () => (await client.list(ConfigMaps, { fields: { "data.owner": "w2" } })).length === 2,
      );

      // An index function that throws on an object: logged with its key; the cache and its other indexes go on.
      assert.deepEqual(
        (await client.list(ConfigMaps, { index: { name: "strict", value: "w1" } }))
          .map((o) => o.metadata?.name)
          .sort(),
        ["w1-a", "w1-b"],
      );
      assert.deepEqual(await client.list(ConfigMaps, { index: { name: "strict", value: "w2" } }), []);
      const failures = logged.filter((line) => line.includes("index function failed"));
      assert.ok(
        failures.some((line) => line.includes(`"key":"${ns}/w2-a"`) && line.includes('"index":"strict"')),
        failures.join("\n") || "nothing logged",
      );

      // A field without an index: an error naming the index to declare, not a scan.
      await assert.rejects(client.list(ConfigMaps, { fields: { "data.colour": "red" } }), (e: unknown) => {
        assert.ok(e instanceof ApiError, String(e));
        assert.equal(e.reason, "IndexNotDeclared");
        assert.match(e.message, /no index "data\.colour" on the cache of configmaps/);
        assert.match(e.message, /indexes: \{ "data\.colour": /);
        assert.match(e.message, /Tokens\.ApiReader/);
        return true;
      });
      // The direct client still sends field selectors to the server.
      assert.deepEqual(
        (await api.list(ConfigMaps, { namespace: ns, fields: { "metadata.name": "w1-a" } })).map(
          (o) => o.metadata?.name,
        ),
        ["w1-a"],
      );

      await assert.rejects(
        api.list(ConfigMaps, { index: { name: "data.owner", value: "w1" } }),
        /index "data\.owner" is kept by the manager's cache, not the API server/,
      );

      // A kind no controller declared: fails at once, naming the fixes.
      await assert.rejects(client.get(ServiceAccounts, { namespace: ns, name: "default" }), (e: unknown) => {
        assert.ok(e instanceof ApiError, String(e));
        assert.equal(e.reason, "KindNotCached");
        assert.match(e.message, /no controller declares a cache of serviceaccounts/);
        assert.match(e.message, /owns\(\.\.\.\) or watches\(\.\.\.\)/);
        assert.match(e.message, /Tokens\.ApiReader/);
        assert.match(e.message, /cache\.lazy/);
        return true;
      });
      assert.equal(
        manager.get(Tokens.InformerFactory).informers.some((i) => i.resource === "serviceaccounts"),
        false,
        "no cache of the whole kind was started",
      );
      // A namespace the declared caches do not hold.
      await assert.rejects(client.list(Secrets, { namespace: ns }), (e: unknown) => {
        assert.ok(e instanceof ApiError, String(e));
        assert.equal(e.reason, "NamespaceNotCached");
        assert.match(e.message, new RegExp(`hold the namespaces ${secretsA} .*not ${ns}`));
        return true;
      });
      assert.ok(Array.isArray(await client.list(Secrets, { namespace: secretsA })));
    } finally {
      stop.abort();
      await running;
    }
  });

  it("caches one informer per cache.namespaces entry scoped by cache.byKind, and cache.lazy starts a whole-kind cache on a read", async () => {
    const a = await createNamespace(env.cp, "caches-a");
    const b = await createNamespace(env.cp, "caches-b");
    const c = await createNamespace(env.cp, "caches-c");
    const api = new ApiClient(env.cp.kubeConfig, { fieldManager: "tessera-test" });
    for (const ns of [a, b, c]) {
      await api.create(ConfigMaps, { metadata: { name: "settings", namespace: ns } });
      await api.create(ConfigMaps, { metadata: { name: "other", namespace: ns } });
    }
    const reconciled = new Set<string>();
    const manager = await Manager.create({
      config: {
        ...managerConfig,
        // byKind scopes the declaration below, which sets no fields of its own ("other" is left out).
        cache: {
          namespaces: [a, b],
          lazy: true,
          byKind: { configmaps: { fields: "metadata.name=settings", compact: true } },
        },
      },
      kubeConfig: env.cp.kubeConfig,
      env: {},
      logger: silentLogger,
    });
    manager
      .controller()
      .for(ConfigMaps)
      .complete((request, ctx) => {
        if (ctx.current()) reconciled.add(request.namespace ?? "");
      });
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    try {
      assert.ok(await manager.waitForSync(AbortSignal.timeout(60_000)));
      const scoped = manager
        .get(Tokens.InformerFactory)
        .informers.filter((i) => i.resource === "configmaps")
        .map((i) => i.namespace)
        .sort();
      assert.deepEqual(scoped, [a, b].sort(), "one informer per namespace of cache.namespaces");
      assert.ok(
        manager
          .get(Tokens.InformerFactory)
          .informers.filter((i) => i.resource === "configmaps")
          .every((i) => i.compact),
        "cache.byKind's compact makes the for() kind's caches compact",
      );
      await eventually("both namespaces reconciled", () => reconciled.size === 2);
      assert.deepEqual([...reconciled].sort(), [a, b].sort(), "nothing of the third namespace");
      const client = manager.get(Tokens.Client);
      assert.equal((await client.list(ConfigMaps)).length, 2, "a list reads every declared namespace");
      // lazy: an undeclared kind is cached whole on its first read.
      await api.create(ServiceAccounts, { metadata: { name: "reader", namespace: c } });
      await eventually("the lazy cache holds the new ServiceAccount", async () =>
        (await client.list(ServiceAccounts, { namespace: c })).some((sa) => sa.metadata?.name === "reader"),
      );
      assert.ok(manager.get(Tokens.InformerFactory).informers.some((i) => i.resource === "serviceaccounts"));
    } finally {
      stop.abort();
      await running;
    }
  });

  it("a sharded primary: the ring's cache takes the labels and indexes, and the client reads it (no second cache)", async () => {
    const ns = await createNamespace(env.cp, "caches-ring");
    const api = new ApiClient(env.cp.kubeConfig, { fieldManager: "tessera-test" });
    for (const [name, tier] of [
      ["g1", "gold"],
      ["g2", "gold"],
      ["s1", "silver"],
    ] as const) {
      await api.create(Widgets, {
        metadata: { name, namespace: ns, labels: { tier } },
        spec: { data: { colour: name === "g2" ? "red" : "blue" } },
      });
    }
    const reconciled = new Set<string>();
    const manager = await Manager.create({
      config: { ...managerConfig, mode: "leader", name: "caches-ring", namespace: ns, identity: "m-0" },
      kubeConfig: env.cp.kubeConfig,
      env: {},
      logger: silentLogger,
    });
    manager
      .controller()
      .for(Widgets, {
        labels: { tier: "gold" },
        indexes: { "spec.data.colour": (w) => [w.spec?.data?.["colour"] ?? ""] },
      })
      .mode("sharded")
      .complete((request) => {
        reconciled.add(request.name);
      });
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    try {
      const client = manager.get(Tokens.Client);
      await eventually("both gold Widgets reconciled", () => reconciled.size === 2, 60_000);
      assert.deepEqual([...reconciled].sort(), ["g1", "g2"]);
      assert.deepEqual((await client.list(Widgets, { namespace: ns })).map((w) => w.metadata?.name).sort(), [
        "g1",
        "g2",
      ]);
      assert.deepEqual(
        (await client.list(Widgets, { fields: { "spec.data.colour": "red" } })).map((w) => w.metadata?.name),
        ["g2"],
      );
      assert.equal((await client.get(Widgets, { namespace: ns, name: "s1" })) ?? "absent", "absent");
      assert.equal(
        manager.get(Tokens.InformerFactory).informers.some((i) => i.resource.startsWith("widgets")),
        false,
        "no second, unsharded cache of the primary kind",
      );
    } finally {
      stop.abort();
      await running;
    }
  });

  it("a second, unsharded cache of a sharded primary kind reports apart from the ring's (cache label) and is logged as a warning, once", async () => {
    const ns = await createNamespace(env.cp, "caches-seen");
    const api = new ApiClient(env.cp.kubeConfig, { fieldManager: "tessera-test" });
    for (const name of ["a", "b", "c"]) await api.create(Widgets, { metadata: { name, namespace: ns } });
    const logged: string[] = [];
    const manager = await Manager.create({
      config: {
        ...managerConfig,
        mode: "leader",
        name: "caches-seen",
        namespace: ns,
        identity: "m-0",
        metricsBindAddress: "127.0.0.1:0",
      },
      kubeConfig: env.cp.kubeConfig,
      env: {},
      logger: new JsonLogger({ level: "warn", write: (line) => logged.push(line) }),
    });
    const reconciled = new Set<string>();
    manager
      .controller()
      .for(Widgets, { namespaces: ns })
      .mode("sharded")
      .complete((request) => void reconciled.add(request.name));
    // Another controller watches the sharded kind: its cache is a whole copy on every replica.
    manager
      .controller()
      .named("copies-widgets")
      .for(ConfigMaps, { namespaces: ns })
      .watches(Widgets, () => [], { namespaces: ns })
      .mode("every-replica")
      .complete(() => undefined);
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    try {
      await eventually("the ring's share reconciled", () => reconciled.size === 3, 60_000);
      // A reconciler reaching into the factory for the same kind makes a third cache: no second warning.
      manager.get(Tokens.InformerFactory).informerFor(Widgets);
      const { metrics } = await manager.endpoints();
      const objects = async () =>
        (
          parsePrometheusText(await (await fetch(`http://127.0.0.1:${metrics!.port}/metrics`)).text()).get(
            "tessera_informer_objects",
          )?.samples ?? []
        ).filter((s) => s.labels["resource"] === "widgets.example.com");
      await eventually("both caches report their objects", async () => {
        const samples = await objects();
        return ["ring", "shared"].every((cache) =>
          samples.some((s) => s.labels["cache"] === cache && s.value === 3),
        );
      });
      const series = (await objects()).map((s) => `${s.labels["cache"]} ${s.labels["informer"]}`);
      assert.equal(new Set(series).size, series.length, `one series per informer: ${series.join("; ")}`);
      const warnings = logged.filter((line) =>
        line.includes("a second, unsharded cache of widgets.example.com"),
      );
      assert.equal(warnings.length, 1, logged.join("\n") || "nothing logged");
      assert.match(warnings[0]!, /"level":"warn"/);
      assert.match(warnings[0]!, /sharded controller \\"widget\\"/);
      assert.match(warnings[0]!, /Tokens\.Client/);
    } finally {
      stop.abort();
      await running;
    }
  });

  it("refuses a sharded primary cached in several namespaces, before anything starts", async () => {
    const manager = await Manager.create({
      config: { ...managerConfig, name: "caches-ring-ns", identity: "m-0" },
      kubeConfig: env.cp.kubeConfig,
      env: {},
      logger: silentLogger,
    });
    manager
      .controller()
      .for(Widgets, { namespaces: ["team-a", "team-b"] })
      .mode("sharded")
      .complete(() => undefined);
    await assert.rejects(manager.run(new AbortController().signal), (e: unknown) => {
      assert.ok(e instanceof BuilderError, String(e));
      assert.match(e.message, /primary cache holds one namespace or all, not team-a, team-b/);
      return true;
    });
  });
});
