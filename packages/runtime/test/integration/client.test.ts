// The client layer against the real API server: every verb of ApiClient,
// typed errors that name the object, the cache-backed reads, discovery and
// events.
import { strict as assert } from "node:assert";
import type { V1ConfigMap } from "@kubernetes/client-node";
import { SystemClock } from "@tessera/core";
import { SharedInformerFactory } from "@tessera/informers";
import {
  ConfigMaps,
  ConflictError,
  DiscoveryRestMapper,
  InvalidError,
  KindNotFoundError,
  KubeTransport,
  LabelSelectorError,
  OwnerReferenceError,
} from "@tessera/client";
import { eventually, useControlPlane } from "@tessera/testenv";
import { ApiClient, isAlreadyExists } from "../../src/index.js";
import { CachedClient, KubeEventRecorder } from "../../src/controller.js";
import { createNamespace, installWidgetCrd } from "./support/widget-cluster.js";

describe("client (real API server)", function () {
  this.timeout(60_000);
  const env = useControlPlane();
  const cm = (name: string, namespace: string, data: Record<string, string> = {}): V1ConfigMap => ({
    metadata: { name, namespace, labels: { app: "web", tier: name } },
    data,
  });

  it("ApiClient: create, get, update, merge and JSON patch, apply, delete; errors typed and named", async () => {
    const ns = await createNamespace(env.cp, "client");
    const client = new ApiClient(env.cp.kubeConfig, { fieldManager: "tessera-test" });
    const created = await client.create(ConfigMaps, cm("a", ns, { k: "1" }));
    assert.equal(created.kind, "ConfigMap");
    await assert.rejects(client.create(ConfigMaps, cm("a", ns)), (e: unknown) => isAlreadyExists(e));
    assert.equal((await client.get(ConfigMaps, { name: "a", namespace: ns }))?.data?.["k"], "1");
    assert.equal(await client.get(ConfigMaps, { name: "missing", namespace: ns }), undefined);

    const updated = await client.update(ConfigMaps, { ...created, data: { k: "2" } });
    // The first read is stale now: a write quoting its resourceVersion conflicts.
    await assert.rejects(client.update(ConfigMaps, { ...created, data: { k: "3" } }), (e: unknown) => {
      assert.ok(e instanceof ConflictError);
      assert.equal(e.code, 409);
      assert.match(e.message, new RegExp(`^update configmaps ${ns}/a: 409 Conflict: `));
      return true;
    });
    assert.equal(updated.data?.["k"], "2");
    const merged = await client.patch(
      ConfigMaps,
      { name: "a", namespace: ns },
      { type: "merge", patch: { data: { m: "x" } } },
    );
    assert.deepEqual(merged.data, { k: "2", m: "x" });
    const jsonPatched = await client.patch(
      ConfigMaps,
      { name: "a", namespace: ns },
      { type: "json", patch: [{ op: "remove", path: "/data/m" }] },
    );
    assert.deepEqual(jsonPatched.data, { k: "2" });
    const applied = await client.apply(ConfigMaps, {
      metadata: { name: "b", namespace: ns, labels: { app: "web" } },
      data: { s: "1" },
    });
    assert.ok(
      applied.metadata?.managedFields?.some((f) => f.manager === "tessera-test" && f.operation === "Apply"),
    );

    await assert.rejects(
      client.create(ConfigMaps, { metadata: { name: "Not_Valid", namespace: ns } }),
      (e: unknown) => {
        assert.ok(e instanceof InvalidError);
        assert.ok(
          e.causes.some((c) => c.field === "metadata.name"),
          JSON.stringify(e.causes),
        );
        assert.match(e.message, /metadata\.name/);
        return true;
      },
    );
    assert.equal(await client.delete(ConfigMaps, { name: "a", namespace: ns }), true);
    assert.equal(await client.delete(ConfigMaps, { name: "a", namespace: ns }), false);
    const listed = await client.list(ConfigMaps, { namespace: ns, labels: "app=web" });
    assert.deepEqual(
      listed.map((o) => o.metadata?.name),
      ["b"],
    );
    assert.equal(listed[0]?.kind, "ConfigMap", "list items carry their kind");
  });

  it("ApiClient.apply with { controller } sets the controller reference; one to another owner is refused", async () => {
    const ns = await createNamespace(env.cp, "client-owner");
    const client = new ApiClient(env.cp.kubeConfig, { fieldManager: "tessera-test" });
    const owner = await client.create(ConfigMaps, cm("owner", ns));
    const child = await client.apply(
      ConfigMaps,
      { metadata: { name: "child", namespace: ns }, data: { k: "v" } },
      { controller: owner },
    );
    assert.deepEqual(child.metadata?.ownerReferences, [
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        name: "owner",
        uid: owner.metadata?.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    const other = await client.create(ConfigMaps, cm("other", ns));
    await assert.rejects(
      client.apply(
        ConfigMaps,
        { metadata: { name: "child", namespace: ns, ownerReferences: child.metadata?.ownerReferences } },
        { controller: other },
      ),
      (e: unknown) =>
        e instanceof OwnerReferenceError &&
        /ConfigMap .*\/child is already controlled by ConfigMap owner; it cannot also be controlled by ConfigMap .*\/other/.test(
          e.message,
        ),
    );
  });

  it("CachedClient reads the informer cache (started on first read) by namespace, labels and fields", async () => {
    const ns = await createNamespace(env.cp, "cached");
    const writer = new ApiClient(env.cp.kubeConfig, { fieldManager: "tessera-test" });
    for (const name of ["front", "back", "db"]) await writer.create(ConfigMaps, cm(name, ns));
    const factory = new SharedInformerFactory({ kubeConfig: env.cp.kubeConfig });
    const stop = new AbortController();
    const running = factory.run(stop.signal);
    try {
      const client = new CachedClient(factory, writer);
      const byLabel = await client.list(ConfigMaps, { namespace: ns, labels: "tier in (front,back)" });
      assert.deepEqual(byLabel.map((o) => o.metadata?.name).sort(), ["back", "front"]);
      // The cache reads the server's grammar (`in(` needs no space) and refuses what the server
      // refuses, as the direct client does, before any request.
      for (const reader of [client, writer]) {
        const found = await reader.list(ConfigMaps, { namespace: ns, labels: "tier in(front,db),tier!=db" });
        assert.deepEqual(
          found.map((o) => o.metadata?.name),
          ["front"],
          reader.reads,
        );
        await assert.rejects(
          reader.list(ConfigMaps, { namespace: ns, labels: "app=web," }),
          LabelSelectorError,
        );
      }
      const byField = await client.list(ConfigMaps, { namespace: ns, fields: { "metadata.name": "db" } });
      assert.deepEqual(
        byField.map((o) => o.metadata?.name),
        ["db"],
      );
      assert.equal((await client.get(ConfigMaps, { name: "db", namespace: ns }))?.metadata?.name, "db");
      // Writes go to the server; the cache follows through its watch.
      await client.delete(ConfigMaps, { name: "db", namespace: ns });
      await eventually(
        "the cache drops db",
        async () => (await client.get(ConfigMaps, { name: "db", namespace: ns })) === undefined,
      );
    } finally {
      stop.abort();
      await running;
    }
  });

  it("DiscoveryRestMapper finds a CRD installed after its first miss, and names what it does not know", async () => {
    const mapper = new DiscoveryRestMapper(new KubeTransport(env.cp.kubeConfig));
    const gvk = { group: "example.com", version: "v1", kind: "Widget" };
    await assert.rejects(mapper.resourceFor(gvk), KindNotFoundError);
    await installWidgetCrd(env.cp);
    const widgets = await mapper.resourceFor(gvk);
    assert.equal(widgets.plural, "widgets");
    assert.equal(widgets.scope, "Namespaced");
    assert.equal(
      (await mapper.resourceFor({ group: "", version: "v1", kind: "ConfigMap" })).plural,
      "configmaps",
    );
    await assert.rejects(
      mapper.resourceFor({ group: "example.com", version: "v1", kind: "Gizmo" }),
      (e: Error) => /kind "Gizmo" in group "example.com", version "v1"/.test(e.message),
    );
  });

  it("KubeEventRecorder writes an events.k8s.io Event and folds repeats into its series", async () => {
    const ns = await createNamespace(env.cp, "events");
    const writer = new ApiClient(env.cp.kubeConfig, { fieldManager: "tessera-test" });
    const object = await writer.create(ConfigMaps, cm("subject", ns));
    const recorder = new KubeEventRecorder({
      transport: new KubeTransport(env.cp.kubeConfig),
      clock: new SystemClock(),
      controller: "example.com/widget-operator",
      instance: "replica-0",
      seriesFlushMs: 200,
    });
    const event = {
      type: "Normal" as const,
      reason: "Synced",
      action: "Apply",
      note: "applied the ConfigMap",
    };
    for (let i = 0; i < 3; i++) recorder.record(object, event);
    const list = async () => {
      const res = await env.cp.raw(`/apis/events.k8s.io/v1/namespaces/${ns}/events`);
      return (JSON.parse(res.body) as { items: Array<Record<string, unknown>> }).items;
    };
    await eventually("one Event with a series of 3", async () => {
      const items = await list();
      return items.length === 1 && (items[0]?.["series"] as { count?: number } | undefined)?.count === 3;
    });
    const [written] = await list();
    assert.equal(written?.["reportingController"], "example.com/widget-operator");
    assert.equal((written?.["regarding"] as { uid?: string }).uid, object.metadata?.uid);
    recorder.close();
  });
});
