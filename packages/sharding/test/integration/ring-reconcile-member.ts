// One replica of a sharded ConfigMap controller as its own process, for the
// reconcile-ledger integration test (ring-reconcile.test.ts): a ShardMember
// and a RingCoordinator with short durations, a ShardedReflector (one
// reflector per owned range, sending it as shardSelector) feeding a cache of
// the member's ConfigMaps, a work queue and a worker pool whose "reconcile"
// only waits.
//
// It prints one JSON line per event on stdout, times in microseconds of the
// machine-wide monotonic clock (process.hrtime), so lines of several processes
// can be compared:
//   {ev:"start"|"end", key, rv, t}   a reconcile began (guard passed) / ended; rv null: not cached
//   {ev:"gain"|"lose", slots, t, epoch}  at the start of onAssignment
//   {ev:"released", slots, t, epoch}     once the reconciles of lost slots have ended
//                                        (just before the epoch is acknowledged)
//   {ev:"epoch", epoch, queued, inFlight, serverFiltering} and {ev:"leader", leading}, every 200 ms
//   {ev:"synced"} once every range the member was first given is listed
//   {ev:"fenced", t}, {ev:"stopped", t}
// stdout is a pipe, and pipe writes are synchronous on Linux: a line written
// before a SIGKILL is read by the parent.
//
// Usage: node ring-reconcile-member.js <kubeconfig> <ring namespace> <ring> <identity> <objects namespace>
// (the ring's Leases and assignment ConfigMap live apart from the ConfigMaps it reconciles).
import { KubeConfig, type V1ConfigMap } from "@kubernetes/client-node";
import { KubeListerWatcher } from "@tessera/reflector";
import { ConfigMaps } from "@tessera/client";
import { WorkQueue, WorkerPool } from "@tessera/workqueue";
import { createDequeueGuard, RingCoordinator, ShardedReflector, ShardMember } from "../../src/index.js";
import { SlotSpace } from "../../src/ranges.js";
import { EnqueuingCache } from "./ring-reconcile-cache.js";
import { InFlightReconciles } from "../../src/in-flight-reconciles.js";

const [kubeconfigPath, namespace, ring, identity, objectsNamespace] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
];
const kubeConfig = new KubeConfig();
kubeConfig.loadFromFile(kubeconfigPath);
// Shorter than the defaults to keep the test quick, but with room for a
// renewal to wait behind a cold watch-list of 5,000 objects on a loaded 2-core machine.
const durations = { leaseDurationMs: 6_000, renewDeadlineMs: 4_000, retryPeriodMs: 1_000 };
/** Enough workers that the slow tail below does not starve the fast reconciles. */
const WORKERS = 16;
const now = () => Number(process.hrtime.bigint() / 1000n);
const emit = (event: Record<string, unknown>) => process.stdout.write(JSON.stringify(event) + "\n");

/**
 * How long one reconcile waits: mostly 5-30 ms; 3% take 200-1200 ms, so that
 * a handover regularly finds reconciles of the slots it moves still running,
 * and onAssignment's wait for them is actually exercised.
 */
const reconcileDelayMs = () => (Math.random() < 0.03 ? 200 + Math.random() * 1_000 : 5 + Math.random() * 25);

const space = new SlotSpace();
const slotOf = (cm: V1ConfigMap) => space.slotOfKey(cm.metadata?.uid ?? "");
const queue = new WorkQueue<string>({ name: `configmaps-${identity}` });
const inFlight = new InFlightReconciles();
/** The slots gained and not yet released: active, or lost with reconciles still running. */
const held = new Set<number>();
const cache = new EnqueuingCache({
  mayEnqueue: (cm) => member.activeSlots.has(slotOf(cm)),
  enqueue: (key) => queue.add(key),
});
const sharded = new ShardedReflector<V1ConfigMap>({
  listerWatcher: new KubeListerWatcher(kubeConfig, ConfigMaps, { namespace: objectsNamespace }),
  store: cache,
  ring,
  member: identity,
  reflector: {
    transform: (cm) => ({ ...cm, metadata: { ...cm.metadata, managedFields: undefined } }),
    consistencyCheck: true,
  },
});
const mayProcess = createDequeueGuard({
  space,
  field: "object.metadata.uid",
  ownedSlots: () => member.activeSlots,
  lookup: (key) => cache.getByKey(key),
});

const member = new ShardMember({
  kubeConfig,
  namespace,
  ring,
  identity,
  pollIntervalMs: 200,
  ...durations,
  onAssignment: async ({ epoch, active, gained, lost }) => {
    // Runs synchronously up to the first await, before any worker can see
    // the new active slots: the gain line comes before any reconcile of them.
    if (gained.size > 0) {
      for (const s of gained) held.add(s);
      emit({ ev: "gain", slots: [...gained], t: now(), epoch });
    }
    if (lost.size > 0) emit({ ev: "lose", slots: [...lost], t: now(), epoch });
    // Gained ranges start listing (their objects are enqueued as they
    // arrive); lost ones are stopped and their objects evicted before this
    // resolves, so the guard drops their keys still queued.
    const rangesSet = sharded.setSlots(active, space);
    // The handover contract: the epoch is acknowledged (and the slots may go
    // to another member) only once our reconciles of them have ended.
    const ending = inFlight.settledFor(lost);
    await Promise.all([rangesSet, ending]);
    if (lost.size > 0) {
      for (const s of lost) held.delete(s);
      emit({ ev: "released", slots: [...lost], t: now(), epoch });
    }
  },
});
// Fenced (the Lease could not be renewed in time): no new work starts; the
// slots count as released once the reconciles already running have ended.
member.fence.addEventListener("abort", () => {
  emit({ ev: "fenced", t: now() });
  const slots = new Set(held);
  held.clear();
  if (slots.size === 0) return;
  void inFlight.settledFor(slots).then(() => emit({ ev: "released", slots: [...slots], t: now() }));
});

const pool = new WorkerPool<string>({
  queue,
  concurrency: WORKERS,
  drainTimeoutMs: 5_000,
  handler: async (key) => {
    // Guard, registration and the start line happen in one synchronous step,
    // so an onAssignment that runs after the guard passed sees this reconcile.
    if (!mayProcess(key)) return;
    // An object not in the cache (deleted, or evicted with its range) is
    // reconciled as absent, as a controller would; the guard drops such keys
    // (whenUnknown "drop"), so this happens only if the guard let one through.
    // Its slot is unknown: every handover waits for it.
    const cm = cache.getByKey(key);
    const finished = inFlight.begin(cm ? slotOf(cm) : undefined);
    emit({ ev: "start", key, rv: cm?.metadata?.resourceVersion ?? null, t: now() });
    try {
      await new Promise((resolve) => setTimeout(resolve, reconcileDelayMs()));
      emit({ ev: "end", key, rv: cache.getByKey(key)?.metadata?.resourceVersion ?? null, t: now() });
    } finally {
      finished();
    }
  },
});

const coordinator = new RingCoordinator({
  kubeConfig,
  namespace,
  ring,
  identity,
  pollIntervalMs: 200,
  expiryMarginMs: 1_000,
  election: durations,
});

const stopCoordinating = new AbortController();
const leave = new AbortController();
const stopWatching = new AbortController();
const watching = sharded.run(stopWatching.signal).catch((err: unknown) => {
  process.stderr.write(`${identity}: sharded reflector stopped: ${String(err)}\n`);
  process.exit(1);
});
const reportSynced = setInterval(() => {
  if (!sharded.hasSynced()) return;
  clearInterval(reportSynced);
  emit({ ev: "synced" });
}, 50);
const stopPooling = new AbortController();
const pooling = pool.run(stopPooling.signal);
const membership = member.run(leave.signal);
if (!(await member.joined())) await membership; // rejects with why it could not join
const coordinating = coordinator.run(stopCoordinating.signal);
const report = setInterval(() => {
  emit({ ev: "leader", leading: coordinator.isLeader });
  emit({
    ev: "epoch",
    epoch: member.epoch ?? -1,
    queued: queue.len(),
    inFlight: inFlight.size,
    serverFiltering: sharded.serverFiltering,
  });
}, 200);

process.once("SIGTERM", () => {
  void (async () => {
    clearInterval(report);
    clearInterval(reportSynced);
    stopCoordinating.abort();
    await coordinating;
    // Releases every slot through onAssignment (waiting for their reconciles), then the Lease.
    leave.abort();
    await membership;
    stopPooling.abort();
    await pooling;
    stopWatching.abort();
    await watching;
    emit({ ev: "stopped", t: now() });
    process.exit(0);
  })();
});
