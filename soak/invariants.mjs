// The invariants, as pure functions over what the observer saw: no framework
// code is used to decide whether the framework behaved.

/**
 * Reconciles of one key by two replicas whose spans overlap. `spans` are
 * { replica, key, startedAt, endedAt } from the replicas' log lines.
 */
export function overlappingReconciles(spans) {
  const byKey = new Map();
  for (const s of spans) {
    const list = byKey.get(s.key) ?? [];
    list.push(s);
    byKey.set(s.key, list);
  }
  const found = [];
  for (const [key, list] of byKey) {
    list.sort((a, b) => a.startedAt - b.startedAt);
    // Against the latest-ending span so far from another replica.
    let open;
    for (const s of list) {
      if (open && open.replica !== s.replica && s.startedAt < open.endedAt)
        found.push({ key, a: open, b: s });
      if (!open || s.endedAt > open.endedAt) open = s;
    }
  }
  return found;
}

/**
 * Elections led by two processes in the same scrape round. `leading` maps a
 * replica to the election names its leader_election_master_status says it leads.
 */
export function twoLeaders(leading) {
  const holders = new Map();
  for (const [replica, names] of leading)
    for (const name of names) holders.set(name, [...(holders.get(name) ?? []), replica]);
  return [...holders].filter(([, who]) => who.length > 1).map(([name, who]) => ({ name, who }));
}

/** Least-squares slope of [tMs, value] points, in value per minute; undefined under 3 points. */
export function slopePerMinute(points) {
  if (points.length < 3) return undefined;
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? 0 : (num / den) * 60_000;
}

/**
 * Keys whose reconciled status is behind the generation the writer last
 * saw: `wanted` maps key to generation, `observed` key to status.observedGeneration.
 */
export function behind(wanted, observed) {
  const late = [];
  for (const [key, generation] of wanted) if ((observed.get(key) ?? 0) < generation) late.push(key);
  return late;
}

/** The p50 and max of a list of numbers. */
export function p50max(values) {
  if (values.length === 0) return { count: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  return { count: sorted.length, p50: sorted[Math.floor((sorted.length - 1) / 2)], max: sorted.at(-1) };
}
