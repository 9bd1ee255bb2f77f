import { strict as assert } from "node:assert";
import type { V1ConfigMap, V1PodTemplate } from "@kubernetes/client-node";
import { ConfigMaps, defineResource, Pods } from "@tessera/client";
import { useControlPlane } from "@tessera/testenv";
import { CacheSyncError, SharedInformerFactory, stripManagedFields } from "../../src/index.js";
import { ReplicaHandler } from "../replica.js";
import { create, eventually, metricSum, pool } from "./kube-helpers.js";

const configMaps = ConfigMaps;
const pods = Pods;
const podTemplates = defineResource<V1PodTemplate>({
  group: "",
  version: "v1",
  kind: "PodTemplate",
  plural: "podtemplates",
  scope: "Namespaced",
});
const ghosts = defineResource({
  group: "nope.example.com",
  version: "v1",
  kind: "Ghost",
  plural: "ghosts",
  scope: "Namespaced",
});

describe("SharedInformerFactory against a real apiserver", function () {
  this.timeout(120_000);
  const env = useControlPlane();
  let factory: SharedInformerFactory | undefined;
  let controller = new AbortController();
  let running: Promise<void> | undefined;
  afterEach(async () => {
    controller.abort();
    await running;
    factory = undefined;
    running = undefined;
    controller = new AbortController();
  });

  it("caches metadata only for a metadata-only informer: no data, no spec, no status", async () => {
    const ns = "metadata-only";
    await create(env.cp, "/api/v1/namespaces", { metadata: { name: ns } });
    await pool(10, 5, async (i) => {
      await create(env.cp, `/api/v1/namespaces/${ns}/configmaps`, {
        metadata: { name: `cm-${i}`, labels: { i: `${i}` } },
        data: { payload: "x".repeat(1000) },
      });
    });
    await create(env.cp, `/api/v1/namespaces/${ns}/pods`, {
      metadata: { name: "pod-0" },
      spec: { containers: [{ name: "c", image: "busybox" }] },
    });
    factory = new SharedInformerFactory({
      kubeConfig: env.cp.kubeConfig,
      namespace: ns,
      reflector: { consistencyCheck: true },
    });
    const cms = factory.metadataInformerFor(configMaps);
    const podMeta = factory.metadataInformerFor(pods);
    const full = factory.informerFor<V1ConfigMap>(configMaps);
    running = factory.run(controller.signal);
    await factory.requireSync(undefined, 30_000);
    // A create after the sync arrives through the metadata watch, not the initial events.
    await create(env.cp, `/api/v1/namespaces/${ns}/configmaps`, {
      metadata: { name: "cm-late" },
      data: { payload: "y" },
    });
    await eventually("the late ConfigMap is cached", () => cms.lister.size === 11);
    for (const obj of [...cms.lister.list(), ...podMeta.lister.list()]) {
      const fields = Object.keys(obj).sort();
      assert.deepEqual(
        fields,
        ["apiVersion", "kind", "metadata"],
        `${obj.metadata?.name} has ${fields.join(", ")}`,
      );
      assert.equal(obj.kind, "PartialObjectMetadata");
      assert.equal(obj.apiVersion, "meta.k8s.io/v1");
      assert.ok(obj.metadata?.uid && obj.metadata.resourceVersion && obj.metadata.creationTimestamp);
    }
    assert.equal(podMeta.lister.get("pod-0", ns)?.metadata?.name, "pod-0");
    assert.equal(cms.lister.namespace(ns).list({ i: "3" }).length, 1, "labels are kept");
    assert.equal(
      full.lister.get("cm-3", ns)?.data?.["payload"]?.length,
      1000,
      "the full informer has the data",
    );
  });

  it("fails requireSync naming a resource the server does not serve, while the other informers work", async () => {
    const ns = "bad-input";
    await create(env.cp, "/api/v1/namespaces", { metadata: { name: ns } });
    factory = new SharedInformerFactory({
      kubeConfig: env.cp.kubeConfig,
      namespace: ns,
      transform: stripManagedFields,
      reflector: { consistencyCheck: true },
    });
    const good = factory.informerFor<V1ConfigMap>(configMaps);
    factory.informerFor(ghosts);
    const replica = new ReplicaHandler<V1ConfigMap>();
    good.addEventHandler(replica);
    running = factory.run(controller.signal);
    const err = await factory.requireSync(undefined, 3_000).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof CacheSyncError, `rejected with ${String(err)}`);
    assert.deepEqual(
      err.unsynced.map((u) => [u.resource, u.namespace]),
      [["ghosts.nope.example.com", ns]],
    );
    assert.match(err.message, /ghosts\.nope\.example\.com in namespace "bad-input"/);
    assert.match(err.message, /404 NotFound/);
    assert.equal(good.hasSynced(), true);
    await create(env.cp, `/api/v1/namespaces/${ns}/configmaps`, {
      metadata: { name: "after" },
      data: { a: "b" },
    });
    await eventually("the good informer keeps working", () => replica.objects.has(`${ns}/after`));
  });

  it("stops the watch of an informer on the server once its last user releases it", async () => {
    const ns = "release";
    await create(env.cp, "/api/v1/namespaces", { metadata: { name: ns } });
    const openWatches = async (): Promise<number> =>
      metricSum(await env.cp.metrics(), "apiserver_longrunning_requests", {
        resource: "podtemplates",
        verb: "WATCH",
      });
    const baseline = await openWatches();
    factory = new SharedInformerFactory({
      kubeConfig: env.cp.kubeConfig,
      namespace: ns,
      reflector: { consistencyCheck: true },
    });
    const first = factory.informerFor(podTemplates);
    const second = factory.informerFor(podTemplates);
    assert.equal(first, second);
    running = factory.run(controller.signal);
    await factory.requireSync(undefined, 30_000);
    assert.equal((await openWatches()) - baseline, 1);
    await factory.release(first);
    assert.equal((await openWatches()) - baseline, 1, "still in use once");
    await factory.release(second);
    await eventually("the server closed the watch", async () => (await openWatches()) === baseline);
    assert.equal(first.isStopped, true);
    assert.equal(factory.informers.length, 0);
  });
});
