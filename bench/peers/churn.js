// Steady churn beside every peer: with 1,000 ConfigMaps cached, a writer
// updates them round-robin at 100, 1,000 and 5,000 writes per second for
// DURATION seconds (default 60) while one contender at a time follows the
// watch and prints a line per event its handler sees (the informer protocol,
// BENCH_EVENTS=1). Reported per contender and rate: the writes the apiserver
// took per second, the events handled per second, events missed (a write
// whose resourceVersion never reached the handler), lag p50 and p99 from the
// write's response to the handler, and the contender's CPU (as % of a core,
// and per 1,000 events: at low rates its idle work dominates the latter).
// The limit reads the same watch and finds each event's name and
// resourceVersion by a text search, without decoding it.
// Each figure is the median of ROUNDS rounds (default 3); contenders rotate.
//
// Run: bash scripts/with-node.sh node bench/peers/churn.js [--quick]
//      (--quick: 1,000 writes/s for 10 s, the main contenders; DURATION=20 RATES=100,1000 ROUNDS=3 ONLY=a,b)
import { ControlPlane } from "@tessera/testenv";
import { cpuMsOf } from "../lib/apiserver.js";
import { buildCargo, buildGo, nodeInformer, startInformer } from "../lib/contenders.js";
import { summarize, writeResult } from "../lib/results.js";
import { populate } from "./data.js";
import { ChurnWriter, now } from "./writer.js";

const quick = process.argv.includes("--quick");
const DURATION = Number(process.env.DURATION ?? (quick ? 10 : 60));
const RATES = (process.env.RATES ?? (quick ? "1000" : "100,1000,5000")).split(",").map(Number);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const only = process.env.ONLY?.split(",");
/** Whether ONLY leaves any contender whose name starts with one of `prefixes` (so that its program is built). */
const wanted = (...prefixes) => !only || only.some((n) => prefixes.some((p) => n.startsWith(p)));
const OBJECTS = 1000;
const NAMESPACE = "churn";

/** @type {{ name: string, command: string[], env: Record<string, string> }[]} */
const contenders = [];
const add = (name, command, env, quickToo = false) => {
  if (command && (!only || only.includes(name)) && (!quick || quickToo))
    contenders.push({ name, command, env });
};
add("limit", nodeInformer, { BENCH_IMPL: "limit", BENCH_WATCH_LIST: "1" }, true);
add("Tessera protobuf", nodeInformer, { BENCH_IMPL: "tessera", BENCH_WIRE: "protobuf" }, true);
add("Tessera JSON", nodeInformer, { BENCH_IMPL: "tessera", BENCH_WIRE: "json" });
add("client-node", nodeInformer, { BENCH_IMPL: "client-node", BENCH_WATCH_LIST: "0" }, true);
const clientGo = wanted("client-go", "controller-runtime")
  ? buildGo("peers/client-go", "client-go")
  : undefined;
add("client-go", clientGo && [clientGo], { BENCH_IMPL: "client-go" }, true);
add("controller-runtime", clientGo && [clientGo], { BENCH_IMPL: "controller-runtime" });
const kubeRs = wanted("kube-rs") ? buildCargo("kube-rs") : undefined;
add("kube-rs", kubeRs && [kubeRs("informer")], {}, true);

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

const cp = new ControlPlane();
await cp.start();
const writer = new ChurnWriter(cp, NAMESPACE, OBJECTS);

const rows = [];
/** @type {Record<string, string[]>} rate + contender -> why each failed round failed */
const failures = {};
try {
  await populate(cp, NAMESPACE, OBJECTS);
  const kubeconfig = cp.writeKubeconfig();
  for (const rate of RATES) {
    /** @type {Record<string, any[]>} */
    const runs = Object.fromEntries(contenders.map((c) => [c.name, []]));
    for (let r = 0; r < ROUNDS; r++) {
      const order = contenders.map((_, i) => contenders[(i + r) % contenders.length]);
      for (const c of order) {
        /** @type {Map<string, number>} */
        const seen = new Map();
        const run = startInformer(
          c,
          { KUBECONFIG: kubeconfig, BENCH_NAMESPACE: NAMESPACE, BENCH_EVENTS: "1" },
          (e) => seen.set(e.rv, e.t),
        );
        const synced = await run.synced;
        if ("unsupported" in synced) throw new Error(`${c.name}: ${synced.unsupported}`);
        const cpu0 = cpuMsOf(run.pid);
        const { written, seconds: writeSeconds, failed } = await writer.churn(rate, DURATION);
        if (failed) console.log(`  ${failed} writes failed`);
        // Let the last events arrive (up to 10 s).
        const deadline = now() + 10e6;
        while (now() < deadline && [...written.keys()].some((rv) => !seen.has(rv)))
          await new Promise((res) => setTimeout(res, 50));
        if (run.exitCode !== undefined) {
          // A contender that dies under the load is a result too: the round counts as failed, with why.
          const why = run.stderr().trim().split("\n").slice(-3).join(" / ");
          console.log(
            `${rate}/s round ${r + 1} ${c.name}: exited (${run.exitCode}) during the churn: ${why}`,
          );
          (failures[`${rate} ${c.name}`] ??= []).push(why);
          continue;
        }
        const cpu = cpuMsOf(run.pid) - cpu0;
        await run.stop();
        const lags = [];
        let last = 0;
        let missed = 0;
        for (const [rv, t] of written) {
          const at = seen.get(rv);
          if (at === undefined) missed++;
          else {
            lags.push((at - t) / 1000);
            last = Math.max(last, at);
          }
        }
        lags.sort((a, b) => a - b);
        const firstWrite = Math.min(...written.values());
        const result = {
          writesPerSec: Math.round(written.size / writeSeconds),
          handledPerSec: Math.round(lags.length / ((last - firstWrite) / 1e6)),
          missed,
          lagP50: Number(quantile(lags, 0.5).toFixed(2)),
          lagP99: Number(quantile(lags, 0.99).toFixed(2)),
          cpuMsPer1000: Math.round((cpu / Math.max(1, lags.length)) * 1000),
          cpuPercent: Number(((cpu / (DURATION * 1000)) * 100).toFixed(1)),
        };
        runs[c.name].push(result);
        console.log(`${rate}/s round ${r + 1} ${c.name}: ${JSON.stringify(result)}`);
      }
    }
    for (const c of contenders) {
      const all = runs[c.name];
      if (all.length === 0) {
        rows.push({ rate, name: c.name, failed: failures[`${rate} ${c.name}`] });
        continue;
      }
      const pick = (f) => summarize(all.map(f));
      rows.push({
        rate,
        name: c.name,
        writesPerSec: pick((x) => x.writesPerSec),
        handledPerSec: pick((x) => x.handledPerSec),
        missed: pick((x) => x.missed),
        lagP50: pick((x) => x.lagP50),
        lagP99: pick((x) => x.lagP99),
        cpuMsPer1000: pick((x) => x.cpuMsPer1000),
        cpuPercent: pick((x) => x.cpuPercent),
      });
    }
  }
} finally {
  writer.close();
  await cp.stop();
}

console.log(
  `\n| offered writes/s | contender | writes taken/s | events handled/s | missed | lag p50 | lag p99 (min-max) | p99 x best peer | CPU, % of a core | CPU per 1,000 events |`,
);
console.log("|---|---|---|---|---|---|---|---|---|---|");
for (const rate of RATES) {
  const here = rows.filter((r) => r.rate === rate);
  const peers = here.filter((r) => r.lagP99 && r.name !== "limit" && !r.name.startsWith("Tessera"));
  const best = peers.sort((a, b) => a.lagP99.median - b.lagP99.median)[0];
  for (const r of here)
    if (!r.lagP99)
      console.log(`| ${rate} | ${r.name} | every round failed: ${r.failed?.[0] ?? "?"} | | | | | | | |`);
    else
      console.log(
        `| ${rate} | ${r.name} | ${r.writesPerSec.median} | ${r.handledPerSec.median} | ${r.missed.median} | ${r.lagP50.median} ms | ${r.lagP99.median} ms (${r.lagP99.min}-${r.lagP99.max}) | ${best ? (r.lagP99.median / best.lagP99.median).toFixed(2) : "n/a"} | ${r.cpuPercent.median} | ${r.cpuMsPer1000.median} ms |`,
      );
}
const chart = (name, title, unit, metric, lowerIsBetter) =>
  writeResult({
    name,
    title,
    unit,
    lowerIsBetter,
    groups: RATES.map((rate) => ({
      label: `${rate.toLocaleString("en-US")} writes/s offered`,
      bars: rows.filter((r) => r.rate === rate && r.lagP99).map((r) => ({ label: r.name, ...metric(r) })),
    })),
    note: `${DURATION} s per round, median of ${ROUNDS} rounds, whiskers min to max`,
    rows,
  });
chart(
  "peers-churn-lag-p99",
  "Churn beside every peer: write response to handler, p99",
  "ms",
  (r) => r.lagP99,
  true,
);
chart(
  "peers-churn-cpu",
  "Churn beside every peer: the contender's CPU per 1,000 events",
  "ms",
  (r) => r.cpuMsPer1000,
  true,
);
