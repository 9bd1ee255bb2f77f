import { setTimeout as delay } from "node:timers/promises";
import { KubeConfig, type V1ConfigMap } from "@kubernetes/client-node";
import { metaNamespaceKey, type DeletedFinalStateUnknown } from "@tessera/reflector";
import { ConfigMaps } from "@tessera/client";
import { ShardedWorkload } from "@tessera/sharding";
import { WorkerPool, WorkQueue } from "@tessera/workqueue";

const kubeConfig = new KubeConfig();
kubeConfig.loadFromDefault();
const workload = new ShardedWorkload<V1ConfigMap>({
  kubeConfig,
  namespace: "operators", // where the ring's Leases and assignment live
  ring: "configmap-audit",
  identity: process.env.POD_NAME ?? "configmap-audit-0",
  resource: ConfigMaps,
});

// The informer holds this member's slots only; keys outside them are not queued.
const queue = new WorkQueue<string>({ name: "configmap-audit" });
const enqueue = (cm: V1ConfigMap | DeletedFinalStateUnknown<V1ConfigMap>) => {
  const key = metaNamespaceKey(cm);
  if (workload.admit(key)) queue.add(key);
};
workload.informer.addEventHandler({ onAdd: enqueue, onUpdate: (_old, cm) => enqueue(cm), onDelete: enqueue });

const pool = new WorkerPool({
  queue,
  concurrency: 4,
  handler: async (key, { signal }) => {
    if (!workload.admit(key)) return; // its slot moved away while the key waited
    const done = workload.track(key); // a handover of its slot waits for this
    try {
      const cm = workload.informer.lister.getByKey(key);
      if (cm === undefined) return; // deleted
      await delay(10, undefined, { signal }); // the work: client calls in a real controller
      console.log(`${key}: ${Object.keys(cm.data ?? {}).length} keys`);
    } finally {
      done();
    }
  },
});

const stop = new AbortController();
process.once("SIGTERM", () => stop.abort());
// Fenced: the member Lease was not renewed in time and its slots may move soon: stop taking work.
workload.fenced.addEventListener("abort", () => stop.abort(workload.fenced.reason));
// On SIGTERM the member gives its slots back once the work tracked on them has ended, then its Lease.
await Promise.all([pool.run(stop.signal), workload.run(stop.signal)]);
