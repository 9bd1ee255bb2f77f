// Sharded fan-out: what a ring of 1, 2, 4 and 8 sharded replicas costs the
// apiserver, against one unsharded replica, with the apiserver's
// ShardedListAndWatch gate on (the server filters each member's LIST and
// WATCH by its shardSelector) and off (every member receives everything and
// filters by the hash itself). Each replica is a Tessera manager with one
// no-op ConfigMap controller (bench/runtime/tessera-replica.js), a process of
// its own, talking to the apiserver through a FaultProxy of its own that
// counts the bytes sent to it.
//
// Per setting: OBJECTS ConfigMaps (default 10,000) are in place; the replicas
// start, every object is reconciled and the ring's assignment is settled
// over the members (phase "sync": initial lists and handovers); then
// a writer patches them at RATE writes/s (default 200) for CHURN seconds
// (default 20) (phase "churn"). Reported: bytes received per member and in
// all (the apiserver's egress) in each phase, CPU per member, and the churn
// egress as a ratio to the unsharded replica's. Median of ROUNDS rounds
// (default 3); the member counts rotate each round.
//
// Run: bash scripts/with-node.sh node bench/peers/fan-out.js [--quick]
//      (--quick: 1 and 4 members, gate on, one round, 10 s of churn; MEMBERS=1,2,4,8 GATES=on,off)
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { ConfigMapAssignmentStore } from "@tessera/sharding";
import { isSettled } from "@tessera/sharding/ranges";
import { ControlPlane, FaultProxy, kubeConfigVia } from "@tessera/testenv";
import { cpuMsOf } from "../lib/apiserver.js";
import { summarize, writeResult } from "../lib/results.js";
import { populate } from "./data.js";
import { ChurnWriter } from "./writer.js";

const quick = process.argv.includes("--quick");
const OBJECTS = Number(process.env.OBJECTS ?? 10_000);
const RATE = Number(process.env.RATE ?? 200);
const CHURN = Number(process.env.CHURN ?? (quick ? 10 : 20));
const ROUNDS = Number(process.env.ROUNDS ?? (quick ? 1 : 3));
const MEMBERS = (process.env.MEMBERS ?? (quick ? "1,4" : "1,2,4,8")).split(",").map(Number);
const GATES = (process.env.GATES ?? (quick ? "on" : "on,off")).split(",");
const NAMESPACE = "fanout";
const replicaScript = fileURLToPath(new URL("../runtime/tessera-replica.js", import.meta.url));
const MiB = 2 ** 20;

/** One replica behind its own proxy; `first` holds the objects it reconciled. */
async function startReplica(cp, mode, identity) {
  const proxy = new FaultProxy(cp.apiserverPort);
  await proxy.start();
  const kubeconfig = `${cp.writeKubeconfig()}-${identity}`;
  writeFileSync(kubeconfig, kubeConfigVia(cp.kubeConfig, proxy.url).exportConfig(), { mode: 0o600 });
  const child = spawn(process.execPath, [replicaScript], {
    env: {
      ...process.env,
      KUBECONFIG: kubeconfig,
      BENCH_NAMESPACE: NAMESPACE,
      BENCH_MODE: mode,
      BENCH_IDENTITY: identity,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const replica = {
    identity,
    proxy,
    child,
    ready: false,
    first: new Set(),
    exited: new Promise((r) => child.on("exit", r)),
  };
  createInterface({ input: child.stdout }).on("line", (text) => {
    const line = JSON.parse(text);
    if (line.ev === "ready") replica.ready = true;
    else if (line.ev === "r") replica.first.add(line.n);
  });
  return replica;
}

async function until(what, done, limitMs = 180_000) {
  const deadline = Date.now() + limitMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Until the ring's published assignment is settled (no slot releasing, every slot owned) over
 * exactly these members, then 2 s more for them to apply it: the churn phase measures the
 * steady state, not handovers. The runtime names the ring <config name>-<controller> in the
 * pod's namespace ("bench-configmap" in "default" here).
 */
async function settled(cp, identities) {
  const store = new ConfigMapAssignmentStore({
    kubeConfig: cp.kubeConfig,
    namespace: "default",
    ring: "bench-configmap",
  });
  const deadline = Date.now() + 180_000;
  for (;;) {
    const read = await store.read();
    const owners = new Set(read?.assignment.owners);
    if (
      read &&
      isSettled(read.assignment) &&
      owners.size === identities.length &&
      identities.every((id) => owners.has(id))
    )
      break;
    if (Date.now() > deadline) throw new Error(`the ring did not settle over ${identities.join(", ")}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, 2000));
}

/** One setting, one round: the bytes and CPU of each member in each phase. */
async function measure(cp, writer, members, round) {
  const mode = members === 0 ? "every-replica" : "sharded";
  const replicas = [];
  for (let i = 0; i < Math.max(1, members); i++)
    replicas.push(await startReplica(cp, mode, `m${members}-r${round}-${i}`));
  const cpu0 = replicas.map((r) => cpuMsOf(r.child.pid));
  await until(`${members} members: every object reconciled`, () => {
    const union = new Set();
    for (const r of replicas) for (const n of r.first) union.add(n);
    return replicas.every((r) => r.ready) && union.size >= OBJECTS;
  });
  if (members > 0)
    await settled(
      cp,
      replicas.map((r) => r.identity),
    );
  const sync = replicas.map((r) => r.proxy.stats.bytesDown);
  const cpu1 = replicas.map((r) => cpuMsOf(r.child.pid));
  const { failed } = await writer.churn(RATE, CHURN);
  await new Promise((r) => setTimeout(r, 1000)); // the last events on their way
  const churn = replicas.map((r, i) => r.proxy.stats.bytesDown - sync[i]);
  const cpu2 = replicas.map((r) => cpuMsOf(r.child.pid));
  for (const r of replicas) r.child.kill("SIGTERM");
  await Promise.all(replicas.map((r) => r.exited));
  for (const r of replicas) await r.proxy.stop();
  if (failed) console.log(`  ${failed} writes failed`);
  return replicas.map((_, i) => ({
    syncBytes: sync[i],
    churnBytes: churn[i],
    syncCpuMs: Math.round(cpu1[i] - cpu0[i]),
    churnCpuMs: Math.round(cpu2[i] - cpu1[i]),
  }));
}

const rows = [];
for (const gate of GATES) {
  const cp = new ControlPlane({ featureGates: { ShardedListAndWatch: gate === "on" } });
  await cp.start();
  const writer = new ChurnWriter(cp, NAMESPACE, OBJECTS);
  try {
    await populate(cp, NAMESPACE, OBJECTS);
    // 0 = one replica, unsharded (every-replica mode): the baseline stream.
    const settings = [0, ...MEMBERS];
    /** @type {Record<number, ReturnType<typeof measure> extends Promise<infer R> ? R[] : never>} */
    const runs = Object.fromEntries(settings.map((m) => [m, []]));
    for (let r = 0; r < ROUNDS; r++) {
      for (const members of settings.map((_, i) => settings[(i + r) % settings.length])) {
        const perMember = await measure(cp, writer, members, r);
        runs[members].push(perMember);
        console.log(`gate ${gate}, ${members || "unsharded"} round ${r + 1}: ${JSON.stringify(perMember)}`);
      }
    }
    for (const members of settings) {
      const total = (key) => summarize(runs[members].map((round) => round.reduce((n, m) => n + m[key], 0)));
      const perMember = (key) => summarize(runs[members].flatMap((round) => round.map((m) => m[key])));
      rows.push({
        gate,
        members,
        label: members === 0 ? "1 replica, unsharded" : `${members} sharded member${members > 1 ? "s" : ""}`,
        syncTotal: total("syncBytes"),
        churnTotal: total("churnBytes"),
        churnPerMember: perMember("churnBytes"),
        syncPerMember: perMember("syncBytes"),
        churnCpuPerMember: perMember("churnCpuMs"),
        syncCpuPerMember: perMember("syncCpuMs"),
      });
    }
  } finally {
    writer.close();
    await cp.stop();
  }
}

console.log(
  `\n${OBJECTS} ConfigMaps; churn: ${RATE} writes/s for ${CHURN} s; bytes = sent by the apiserver to the members (through their proxies); median of ${ROUNDS} rounds`,
);
console.log(
  "| gate | replicas | sync: egress in all | sync: per member | churn: egress in all | x unsharded | churn: per member | CPU per member, sync / churn |",
);
console.log("|---|---|---|---|---|---|---|---|");
for (const r of rows) {
  const base = rows.find((x) => x.gate === r.gate && x.members === 0);
  const m = (s) => `${(s.median / MiB).toFixed(2)} MiB`;
  console.log(
    `| ${r.gate} | ${r.label} | ${m(r.syncTotal)} | ${m(r.syncPerMember)} | ${m(r.churnTotal)} | ${(r.churnTotal.median / base.churnTotal.median).toFixed(2)} | ${m(r.churnPerMember)} | ${r.syncCpuPerMember.median} / ${r.churnCpuPerMember.median} ms |`,
  );
}
const mib = (s) => ({
  median: Number((s.median / MiB).toFixed(3)),
  min: Number((s.min / MiB).toFixed(3)),
  max: Number((s.max / MiB).toFixed(3)),
});
writeResult({
  name: "peers-fan-out-egress",
  title: `Sharded fan-out: apiserver egress during churn (${RATE} writes/s, ${CHURN} s)`,
  unit: "MiB",
  lowerIsBetter: true,
  groups: GATES.map((gate) => ({
    label: `ShardedListAndWatch ${gate}`,
    bars: rows.filter((r) => r.gate === gate).map((r) => ({ label: r.label, ...mib(r.churnTotal) })),
  })),
  note: `all members together; median of ${ROUNDS} rounds, whiskers min to max`,
  rows,
});
process.exit(0);
