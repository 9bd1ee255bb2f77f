// The fault schedule: which fault, on which replica, for how long, drawn from
// a seeded generator so that a run can be replayed with `--seed`.

/** Every kind of fault the soak injects. */
export const FAULT_KINDS = [
  "proxy-cut",
  "proxy-stall",
  "proxy-latency",
  "apiserver-restart",
  "etcd-restart",
  "etcd-compaction",
  "replica-sigkill",
  "replica-sigterm",
  "coordinator-kill",
  "leader-kill",
  "scale-up",
  "scale-down",
];

/**
 * A seeded source of numbers in [0, 1) (mulberry32), shaped like
 * @tessera/core's RandomSource. @tessera/core has no seeded generator: its
 * RandomSource is only the injection point.
 */
export function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The next fault: a kind, the sharded replica count it may move to, a target
 * (an index the caller maps onto the live replicas), and how long it lasts.
 * Scale steps keep the sharded example between 3 and 5 replicas.
 */
export function nextFault(random, shardedCount) {
  const pick = (list) => list[Math.floor(random() * list.length)];
  let kinds = FAULT_KINDS;
  if (shardedCount >= 5) kinds = kinds.filter((k) => k !== "scale-up");
  if (shardedCount <= 3) kinds = kinds.filter((k) => k !== "scale-down");
  const kind = pick(kinds);
  return {
    kind,
    target: random(),
    // Connection faults last 2-8 s; latency is 100-800 ms per chunk.
    durationMs: 2000 + Math.floor(random() * 6000),
    latencyMs: 100 + Math.floor(random() * 700),
    // Which example a proxy fault hits: the sharded one three times in four.
    onLeaderExample: random() < 0.25,
    gapMs: 1000 + Math.floor(random() * 3000),
  };
}
