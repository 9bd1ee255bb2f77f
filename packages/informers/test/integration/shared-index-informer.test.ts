import { strict as assert } from "node:assert";
import type { V1ConfigMap, V1PodTemplate } from "@kubernetes/client-node";
import { KubeListerWatcher, metaNamespaceKey, DeletedFinalStateUnknown } from "@tessera/reflector";
import { ConfigMaps, defineResource, type KubeObject, type Resource } from "@tessera/client";
import { FaultProxy, kubeConfigVia, useControlPlane } from "@tessera/testenv";
import { SharedIndexInformer, stripManagedFields } from "../../src/index.js";
import { ReplicaHandler, versions } from "../replica.js";
import { seededRandom } from "../seeded-random.js";
import { create, delay, eventually, list, metricSum, pool, send } from "./kube-helpers.js";

const configMaps = ConfigMaps;
// Nothing inside kube-apiserver watches PodTemplates, so every WATCH counted for them is ours.
const podTemplates = defineResource<V1PodTemplate>({
  group: "",
  version: "v1",
  kind: "PodTemplate",
  plural: "podtemplates",
  scope: "Namespaced",
});

// Every case runs on both caches: objects kept as they are, and kept compact (as JSON text).
describe("SharedIndexInformer against a real apiserver", function () {
  informerCases.call(this, false);
});
describe("SharedIndexInformer against a real apiserver (compact cache)", function () {
  informerCases.call(this, true);
});

function informerCases(this: Mocha.Suite, compact: boolean): void {
  this.timeout(120_000);
  const env = useControlPlane();

  function informerFor<T extends KubeObject>(
    resource: Resource<T>,
    namespace: string,
    consistencyCheck = true,
  ): SharedIndexInformer<T> {
    return new SharedIndexInformer({
      listerWatcher: new KubeListerWatcher(env.cp.kubeConfig, resource, { namespace }),
      transform: stripManagedFields,
      reflector: { consistencyCheck },
      compact,
    });
  }

  async function namespace(name: string): Promise<void> {
    await create(env.cp, "/api/v1/namespaces", { metadata: { name } });
  }

  it("serves two handlers from one WATCH (apiserver_request_total) and no LIST", async () => {
    const ns = "watch-count";
    await namespace(ns);
    const labels = { resource: "podtemplates", group: "", version: "v1" };
    const before = await env.cp.metrics();
    // Without the watch-list consistency check: its LIST would be counted below.
    const informer = informerFor<V1PodTemplate>(podTemplates, ns, false);
    const a = new ReplicaHandler<V1PodTemplate>();
    const b = new ReplicaHandler<V1PodTemplate>();
    const regA = informer.addEventHandler(a, { name: "a" });
    const regB = informer.addEventHandler(b, { name: "b" });
    const stop = new AbortController();
    const done = informer.run(stop.signal);
    await informer.waitForSync();
    await pool(5, 5, async (i) => {
      await create(env.cp, `/api/v1/namespaces/${ns}/podtemplates`, {
        metadata: { name: `tpl-${i}` },
        template: { spec: { containers: [{ name: "c", image: "busybox" }] } },
      });
    });
    await eventually("both handlers saw the creates", () => a.objects.size === 5 && b.objects.size === 5);
    const during = await env.cp.metrics();
    const open = (text: string): number =>
      metricSum(text, "apiserver_longrunning_requests", { ...labels, verb: "WATCH" });
    assert.equal(open(during) - open(before), 1, "one watch open for two handlers");
    stop.abort();
    await done;
    // A WATCH is counted in apiserver_request_total when it ends.
    const count = (text: string, verb: string): number =>
      metricSum(text, "apiserver_request_total", { ...labels, verb });
    let after = await env.cp.metrics();
    await eventually("the watch is counted", async () => {
      after = await env.cp.metrics();
      return count(after, "WATCH") > count(before, "WATCH");
    });
    assert.equal(count(after, "WATCH") - count(before, "WATCH"), 1, "one WATCH request in all");
    assert.equal(count(after, "LIST") - count(before, "LIST"), 0, "synced by watch-list, no LIST");
    assert.ok(regA.hasSynced() && regB.hasSynced());
  });

  it("does not let a handler that blocks for 5 s delay the other", async () => {
    const ns = "slow-handler";
    await namespace(ns);
    const informer = informerFor<V1ConfigMap>(configMaps, ns);
    let blockedCalls = 0;
    let blockedDone = 0;
    informer.addEventHandler(
      {
        onAdd: async () => {
          blockedCalls++;
          if (blockedCalls === 1) await delay(5_000);
          blockedDone++;
        },
      },
      { name: "blocking" },
    );
    const free = new ReplicaHandler<V1ConfigMap>();
    const freeReg = informer.addEventHandler(free, { name: "free" });
    const stop = new AbortController();
    const done = informer.run(stop.signal);
    await informer.waitForSync();
    await pool(20, 10, async (i) => {
      await create(env.cp, `/api/v1/namespaces/${ns}/configmaps`, {
        metadata: { name: `cm-${i}` },
        data: { i: `${i}` },
      });
    });
    await eventually("the free handler saw all 20", () => free.objects.size === 20);
    assert.equal(blockedDone, 0, "the blocking handler is still inside its first call");
    assert.equal(blockedCalls, 1, "and has not been handed the second");
    assert.equal(freeReg.pending, 0);
    await eventually("the blocking handler caught up", () => blockedDone === 20, 30_000);
    stop.abort();
    await done;
  });

  it("after 2,000 random creates, updates and deletes, the cache and every handler's replica equal a fresh LIST", async function () {
    this.timeout(180_000);
    const ns = "random-ops";
    await namespace(ns);
    const base = `/api/v1/namespaces/${ns}/configmaps`;
    const informer = informerFor<V1ConfigMap>(configMaps, ns);
    const early = new ReplicaHandler<V1ConfigMap>();
    const slow = new ReplicaHandler<V1ConfigMap>();
    const earlyReg = informer.addEventHandler(early, { name: "early" });
    const slowReg = informer.addEventHandler(
      {
        onAdd: async (o) => {
          await delay(0);
          slow.onAdd(o);
        },
        onUpdate: async (o, n) => {
          await delay(0);
          slow.onUpdate(o, n);
        },
        onDelete: async (o) => {
          await delay(0);
          slow.onDelete(o);
        },
      },
      { name: "slow" },
    );
    const stop = new AbortController();
    const done = informer.run(stop.signal);
    await informer.waitForSync();

    const random = seededRandom(2_000);
    const plan = Array.from({ length: 2_000 }, () => ({
      roll: random(),
      name: `cm-${Math.floor(random() * 250)}`,
    }));
    let late: ReplicaHandler<V1ConfigMap> | undefined;
    let lateReg: ReturnType<typeof informer.addEventHandler> | undefined;
    const outcomes = new Map<number, number>();
    await pool(plan.length, 16, async (i) => {
      const { roll, name } = plan[i] as { roll: number; name: string };
      if (i === 1_000) {
        // Half-way through, a handler joins and is handed the cache as it is.
        late = new ReplicaHandler<V1ConfigMap>();
        lateReg = informer.addEventHandler(late, { name: "late" });
      }
      let status: number;
      if (roll < 0.45) {
        status = (await send(env.cp, "POST", base, { metadata: { name }, data: { v: `${i}` } })).status;
      } else if (roll < 0.8) {
        status = (
          await send(
            env.cp,
            "PATCH",
            `${base}/${name}`,
            { data: { v: `${i}` } },
            "application/merge-patch+json",
          )
        ).status;
      } else {
        status = (await send(env.cp, "DELETE", `${base}/${name}`)).status;
      }
      outcomes.set(status, (outcomes.get(status) ?? 0) + 1);
    });
    const fresh = await list<V1ConfigMap>(env.cp, base);
    const expected = new Map(fresh.items.map((o) => [metaNamespaceKey(o), o]));
    await eventually(
      "the cache equals the LIST and the handlers are idle",
      () =>
        JSON.stringify(versions(informer.lister.list())) === JSON.stringify(versions(expected)) &&
        earlyReg.pending === 0 &&
        slowReg.pending === 0 &&
        lateReg?.pending === 0,
    );
    assert.ok((outcomes.get(201) ?? 0) > 300, `creates: ${JSON.stringify([...outcomes])}`);
    assert.ok((outcomes.get(200) ?? 0) > 300, `updates and deletes: ${JSON.stringify([...outcomes])}`);
    assert.deepEqual(versions(informer.lister.list()), versions(expected), "cache equals LIST");
    early.assertEquals(expected, "early handler");
    slow.assertEquals(expected, "slow handler");
    (late as ReplicaHandler<V1ConfigMap>).assertEquals(expected, "late handler");
    assert.ok(early.updates > 100 && early.deletes > 100, "the sequence had updates and deletes");
    assert.ok(
      informer.lister.list().every((o) => o.metadata?.managedFields === undefined),
      "managedFields stripped",
    );
    stop.abort();
    await done;
  });

  // Last: compaction restarts the apiserver.
  it("delivers tombstones for deletions it only learns of by relisting after a 410", async () => {
    const ns = "tombstones";
    await namespace(ns);
    const base = `/api/v1/namespaces/${ns}/configmaps`;
    await pool(20, 10, async (i) => {
      await create(env.cp, base, { metadata: { name: `cm-${i}` }, data: { i: `${i}` } });
    });
    const proxy = new FaultProxy(env.cp.apiserverPort);
    await proxy.start();
    try {
      const informer = new SharedIndexInformer<V1ConfigMap>({
        listerWatcher: new KubeListerWatcher(kubeConfigVia(env.cp.kubeConfig, proxy.url), configMaps, {
          namespace: ns,
        }),
        // Short retries while the server is away, so the test does not sit out a long backoff.
        reflector: { consistencyCheck: true, backoff: { initialMs: 200, maxMs: 1_000 } },
        compact,
      });
      const replica = new ReplicaHandler<V1ConfigMap>();
      const tombstones: string[] = [];
      const reg = informer.addEventHandler(replica);
      informer.addEventHandler({
        onDelete: (obj) => void (obj instanceof DeletedFinalStateUnknown && tombstones.push(obj.key)),
      });
      const stop = new AbortController();
      const done = informer.run(stop.signal);
      await reg.waitForSync();
      assert.equal(replica.objects.size, 20);
      // The informer is cut off while five objects go and two come, and the history is compacted away.
      proxy.refuse(true);
      proxy.cutAll();
      for (let i = 0; i < 5; i++) assert.equal((await send(env.cp, "DELETE", `${base}/cm-${i}`)).status, 200);
      await create(env.cp, base, { metadata: { name: "new-1" } });
      await create(env.cp, base, { metadata: { name: "new-2" } });
      await env.cp.compact();
      proxy.refuse(false);
      const fresh = await list<V1ConfigMap>(env.cp, base);
      const expected = new Map(fresh.items.map((o) => [metaNamespaceKey(o), o]));
      await eventually(
        "the informer relisted",
        () => replica.objects.size === 17 && reg.pending === 0,
        90_000,
      );
      replica.assertEquals(expected);
      assert.deepEqual(tombstones.sort(), [0, 1, 2, 3, 4].map((i) => `${ns}/cm-${i}`).sort());
      assert.equal(replica.tombstones, 5);
      stop.abort();
      await done;
    } finally {
      await proxy.stop();
    }
  });
}
