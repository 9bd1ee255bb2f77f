// How long a ring of four in-process replicas (ShardMember + RingCoordinator
// each, each through its own fault proxy) takes to settle again with the
// DEFAULT durations (lease 15 s, renew deadline 10 s, retry 2 s, expiry
// margin 2 s, polling 500 ms): after a graceful stop, after a member is cut
// off (crash), and after the coordinator's replica is cut off. "Settled" =
// the published assignment has no releasing slot, every slot is owned by a
// live member, balanced, and every live member has applied it.
// Run: bash scripts/with-node.sh node bench/sharding/convergence.js   (after npm run build; needs the control plane binaries)
import { ControlPlane, FaultProxy, kubeConfigVia } from "@tessera/testenv";
import { CoreV1Api } from "@kubernetes/client-node";
import { ConfigMapAssignmentStore, RingCoordinator, ShardMember } from "@tessera/sharding";
import { isSettled } from "@tessera/sharding/ranges";

const NS = "bench";
const RING = "bench";
const cp = new ControlPlane();
await cp.start();
await cp.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NS } } });
const store = new ConfigMapAssignmentStore({ kubeConfig: cp.kubeConfig, namespace: NS, ring: RING });
const replicas = new Map();

async function startReplica(id) {
  const proxy = new FaultProxy(cp.apiserverPort);
  await proxy.start();
  const kubeConfig = kubeConfigVia(cp.kubeConfig, proxy.url);
  const member = new ShardMember({ kubeConfig, namespace: NS, ring: RING, identity: id });
  const coordinator = new RingCoordinator({ kubeConfig, namespace: NS, ring: RING, identity: id });
  const leave = new AbortController();
  const membership = member.run(leave.signal);
  if (!(await member.joined())) await membership; // rejects with why it could not join
  const stop = new AbortController();
  replicas.set(id, {
    id,
    proxy,
    member,
    leave,
    membership,
    coordinator,
    stop,
    running: coordinator.run(stop.signal),
  });
}

async function settled(ids) {
  const t0 = performance.now();
  for (;;) {
    const read = await store.read();
    if (read && isSettled(read.assignment)) {
      const owners = new Set(read.assignment.owners);
      const counts = ids.map((id) => replicas.get(id).member.activeSlots.size);
      const ok =
        owners.size === ids.length &&
        ids.every((id) => owners.has(id) && replicas.get(id).member.epoch === read.assignment.epoch) &&
        counts.every((c) => Math.abs(c - 256 / ids.length) < 1);
      if (ok) return (performance.now() - t0) / 1000;
    }
    if (performance.now() - t0 > 120_000) throw new Error(`not settled over ${ids}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const live = () => [...replicas.keys()];
/** @type {Array<[string, number]>} */
const results = [];
let t = performance.now();
for (const id of ["pod-0", "pod-1", "pod-2", "pod-3"]) await startReplica(id);
results.push(["4 members start", (performance.now() - t) / 1000 + (await settled(live()))]);

const follower = () => [...replicas.values()].find((r) => !r.coordinator.isLeader);
const leader = () => [...replicas.values()].find((r) => r.coordinator.isLeader);

let r = follower();
t = performance.now();
r.stop.abort();
await r.running;
r.leave.abort();
await r.membership;
replicas.delete(r.id);
await r.proxy.stop();
results.push([
  `graceful stop of a member (${r.id}), 4 -> 3`,
  (performance.now() - t) / 1000 + (await settled(live())),
]);

r = follower();
t = performance.now();
r.proxy.refuse(true);
r.proxy.cutAll();
replicas.delete(r.id);
results.push([`member cut off (${r.id}), 3 -> 2`, (performance.now() - t) / 1000 + (await settled(live()))]);
r.stop.abort();

r = leader();
t = performance.now();
r.proxy.refuse(true);
r.proxy.cutAll();
replicas.delete(r.id);
results.push([
  `coordinator's replica cut off (${r.id}), 2 -> 1`,
  (performance.now() - t) / 1000 + (await settled(live())),
]);
r.stop.abort();

for (const [what, s] of results) console.log(`${what}: settled after ${s.toFixed(1)} s`);
for (const x of replicas.values()) {
  x.stop.abort();
  await x.running;
  x.leave.abort();
  await x.membership;
  await x.proxy.stop();
}
await cp.stop();
process.exit(0);
