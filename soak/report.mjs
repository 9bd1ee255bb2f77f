// The soak's figures: printed, and written as JSON.
import { writeFileSync } from "node:fs";
import { p50max, slopePerMinute } from "./invariants.mjs";

/** RSS growth over the second half of the run above this many MiB/min counts as unbounded. */
export const RSS_SLOPE_LIMIT_MIB_PER_MIN = 8;

/** How many violations are printed in full, with the events around them; the JSON has them all. */
export const LOGGED_VIOLATIONS = 10;

/** RSS figures per replica, and a violation for each whose second-half slope passes the limit. */
export function rssFigures(replicas) {
  return replicas.map((r) => {
    // The second half of the replica's own life, judged only when it lived
    // three minutes: a younger replica's slope is its start-up warm-up.
    const life = r.rss.length ? r.rss.at(-1)[0] - r.rss[0][0] : 0;
    const second = r.rss.filter(([t]) => t >= r.rss[0][0] + life / 2);
    const slope = life >= 180_000 ? slopePerMinute(second) : undefined;
    return {
      replica: r.name,
      startMiB: r.rss[0]?.[1],
      endMiB: r.rss.at(-1)?.[1],
      slopeMiBPerMin: slopePerMinute(r.rss),
      secondHalfSlopeMiBPerMin: slope,
      unbounded: slope !== undefined && slope > RSS_SLOPE_LIMIT_MIB_PER_MIN,
    };
  });
}

export function report({
  seed,
  minutes,
  faults,
  convergence,
  writes,
  failedWrites,
  reconciles,
  tenantsMissing,
  restarts,
  violations,
  rss,
  wallMs,
}) {
  const byKind = {};
  for (const f of faults) byKind[f.kind] = (byKind[f.kind] ?? 0) + 1;
  const converge = {};
  for (const [kind, list] of Object.entries(convergence)) converge[kind] = p50max(list);
  const figures = {
    seed,
    minutes,
    wallSeconds: Math.round(wallMs / 1000),
    faults: byKind,
    faultsTotal: faults.length,
    writes,
    failedWrites,
    reconciles,
    tenantsMissing,
    restarts,
    violations: violations.length,
    convergeMs: converge,
    rss,
    violationDetails: violations,
    faultLog: faults,
  };
  return figures;
}

export function print(figures, jsonPath) {
  const f = figures;
  console.log("");
  console.log(`soak summary (seed ${f.seed}, ${f.minutes} min, wall ${f.wallSeconds} s)`);
  console.log(
    `  faults: ${f.faultsTotal} (${Object.entries(f.faults)
      .map(([k, n]) => `${k} ${n}`)
      .join(", ")})`,
  );
  console.log(
    `  writes: ${f.writes} (${f.failedWrites} refused during faults, retried by later writes); reconciles: ${f.reconciles} (${f.tenantsMissing} found no Tenant in their replica's cache); replicas that exited to be restarted (fenced or leadership lost): ${f.restarts}`,
  );
  for (const [kind, c] of Object.entries(f.convergeMs))
    console.log(
      `  converged after ${kind}: p50 ${(c.p50 / 1000).toFixed(1)} s, max ${(c.max / 1000).toFixed(1)} s (${c.count})`,
    );
  for (const r of f.rss) {
    const s = (v) => (v === undefined ? "-" : v.toFixed(1));
    console.log(
      `  RSS ${r.replica}: ${s(r.startMiB)} -> ${s(r.endMiB)} MiB, slope ${s(r.slopeMiBPerMin)} MiB/min, second half ${s(r.secondHalfSlopeMiBPerMin)}`,
    );
  }
  console.log(`  violations: ${f.violations}`);
  const byInvariant = new Map();
  for (const v of f.violationDetails) byInvariant.set(v.invariant, (byInvariant.get(v.invariant) ?? 0) + 1);
  for (const [invariant, n] of byInvariant) console.log(`    ${n} x ${invariant}`);
  for (const v of f.violationDetails.slice(0, LOGGED_VIOLATIONS)) {
    console.log(`  - ${(v.at / 1000).toFixed(1)} s ${v.invariant}: ${v.detail}`);
    for (const e of v.events.slice(-25)) console.log(`      ${e}`);
  }
  if (f.violations > LOGGED_VIOLATIONS)
    console.log(`  (${f.violations - LOGGED_VIOLATIONS} more violations, with their details, in the JSON)`);
  writeFileSync(jsonPath, JSON.stringify(f, null, 2));
  console.log(`  JSON: ${jsonPath}`);
}
