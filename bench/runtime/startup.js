// Start-up cost of an operator: a manager with one controller (ConfigMaps,
// none in the cluster) on the in-cluster configuration path, as in a pod: the
// service-account token, ca.crt and namespace files at
// /var/run/secrets/kubernetes.io/serviceaccount (written for the run when
// absent, removed after) and KUBERNETES_SERVICE_HOST/PORT pointing at a
// testenv API server. Measured per contender, RUNS times (default 5):
// time from spawn to its "ready" line (caches synced), and RSS when ready
// and 2 s later (idle). Baselines: a bare node process, one that holds a
// single HTTPS watch on the API server with node's own modules (the least a
// Node operator does: idle-https.js), and one that only imports
// @kubernetes/client-node. "tessera (bundled)" is the same replica
// bundled by `tessera bundle` (esbuild: an entry module and the chunks it
// imports on demand), as an operator's image ships it: a few modules instead
// of ~700 saves their per-module cost. "As the
// image runs it" adds the image's environment and flags (templates/operator/Dockerfile.npm).
//
// "tessera, OpenTelemetry SDK metrics" is the replica with the SDK behind its meter
// (BENCH_METRICS=sdk), as every operator had before PrometheusMetrics; "as before" also
// compiles the configuration schema with ajv at start (BENCH_AJV=1), as the runtime did
// before its validator was compiled at build time. The semi-space variants pass V8's
// young-generation size (MiB per semi-space) to the same replica. Rounds are
// rotated: run i of every contender, then run i+1. PEERS=0 leaves out the Go and Rust
// contenders (no build).
//
// Run: bash scripts/with-node.sh node bench/runtime/startup.js   (after npm run build)
// Other contenders: --contender name=command (the line protocol of tessera-replica.js).
import { spawn } from "node:child_process";
import { loadavg } from "node:os";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { runBundle } from "@tessera/cli";
import { ControlPlane, writeServiceAccount } from "@tessera/testenv";
import { buildCargo, controllerRuntimeReplica } from "../lib/contenders.js";
import { summarize, writeResult } from "../lib/results.js";

const RUNS = Number(process.env.RUNS ?? 5);
const SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";
const here = (file) => fileURLToPath(new URL(file, import.meta.url));
// Bundled by `tessera bundle`'s own code, as an image ships it: an entry module, the chunks it
// imports on demand beside it (.build/chunks/) and source maps.
const { out: bundle } = await runBundle({
  dir: here("."),
  entry: "tessera-replica.js",
  out: ".build/tessera-replica.mjs",
});
const contenders = [
  ["node (bare)", `${process.execPath} ${here("idle-node.js")}`],
  ["node + one HTTPS watch (node's modules only)", `${process.execPath} ${here("idle-https.js")}`],
  [
    "node + import @kubernetes/client-node",
    `${process.execPath} ${here("idle-node.js")} @kubernetes/client-node`,
  ],
  ["tessera", `${process.execPath} ${here("tessera-replica.js")}`],
  [
    "tessera, OpenTelemetry SDK metrics",
    `BENCH_METRICS=sdk ${process.execPath} ${here("tessera-replica.js")}`,
  ],
  [
    "tessera, SDK metrics and ajv at start (as before)",
    `BENCH_METRICS=sdk BENCH_AJV=1 ${process.execPath} ${here("tessera-replica.js")}`,
  ],
  [
    "tessera, --max-semi-space-size=8",
    `${process.execPath} --max-semi-space-size=8 ${here("tessera-replica.js")}`,
  ],
  [
    "tessera, --max-semi-space-size=16",
    `${process.execPath} --max-semi-space-size=16 ${here("tessera-replica.js")}`,
  ],
  ["tessera (bundled)", `${process.execPath} ${bundle}`],
  [
    "tessera (bundled), as the image runs it",
    `MALLOC_ARENA_MAX=1 ${process.execPath} --max-semi-space-size=8 ${bundle}`,
  ],
  [
    "tessera (bundled), as the image runs it, serving probes and metrics",
    `BENCH_SERVE=1 MALLOC_ARENA_MAX=1 ${process.execPath} --max-semi-space-size=8 ${bundle}`,
  ],
];
if (process.env.PEERS !== "0") {
  const controllerRuntime = controllerRuntimeReplica();
  if (controllerRuntime) contenders.push(["controller-runtime v0.25.3", controllerRuntime]);
  const kubeRs = buildCargo("kube-rs");
  if (kubeRs) contenders.push(["kube-rs", kubeRs("controller")]);
}
for (let i = 2; i < process.argv.length; i++) {
  if (process.argv[i] === "--contender") {
    const [name, ...command] = process.argv[++i].split("=");
    contenders.push([name, command.join("=")]);
  }
}

const cp = new ControlPlane();
await cp.start();
const created = !existsSync(SA_DIR);
if (!created) {
  console.error(`${SA_DIR} exists on this machine; not overwriting it. Run in a container without it.`);
  process.exit(2);
}
const account = await writeServiceAccount(cp, SA_DIR);
const podEnv = {
  PATH: process.env.PATH,
  HOME: "/nonexistent", // no ~/.kube/config: the in-cluster path
  ...account.env,
  POD_NAME: "operator-0",
  BENCH_NAMESPACE: "default",
  BENCH_MODE: "every-replica",
};

const rssMiB = (pid) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
};

async function once(command) {
  // Leading NAME=value words are the contender's own environment.
  const words = command.split(" ");
  const env = { ...podEnv };
  while (/^[A-Z_]+=/.test(words[0])) {
    const [name, value] = words.shift().split("=");
    env[name] = value;
  }
  const [bin, ...args] = words;
  const started = performance.now();
  const child = spawn(bin, args, { env, stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const readyMs = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).on("line", (line) => {
      if (line.includes('"ready"')) resolve(performance.now() - started);
    });
    exited.then((code) => reject(new Error(`${command} exited (${code}) before ready`)));
  });
  const atReady = rssMiB(child.pid);
  await new Promise((r) => setTimeout(r, 2000));
  const idle = rssMiB(child.pid);
  child.kill("SIGTERM");
  await exited;
  return { readyMs, atReady, idle };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rows = [];
try {
  const runsOf = contenders.map(() => []);
  for (let i = 0; i < RUNS; i++) {
    for (const [c, [, command]] of contenders.entries()) runsOf[c].push(await once(command));
  }
  for (const [c, [name]] of contenders.entries()) {
    const runs = runsOf[c];
    rows.push({
      name,
      runs,
      readyMs: median(runs.map((r) => r.readyMs)),
      atReady: median(runs.map((r) => r.atReady)),
      idle: median(runs.map((r) => r.idle)),
    });
  }
} finally {
  if (created) rmSync("/var/run/secrets", { recursive: true, force: true });
  await cp.stop();
}
console.log(
  `\nload average (1 min) at the end: ${loadavg()[0].toFixed(1)}; median of ${RUNS} rotated runs; in-cluster config; one controller, nothing cached; node ${process.version}`,
);
const width = Math.max(...rows.map((r) => r.name.length));
console.log(`${"contender".padEnd(width)} start -> ready   RSS at ready   RSS idle (+2 s)`);
for (const r of rows) {
  console.log(
    `${r.name.padEnd(width)} ${`${Math.round(r.readyMs)} ms`.padStart(14)} ${`${r.atReady.toFixed(1)} MiB`.padStart(14)} ${`${r.idle.toFixed(1)} MiB`.padStart(17)}`,
  );
}
writeResult({
  name: "runtime-startup",
  title: "Operator start: process start to ready (one controller, nothing cached)",
  unit: "ms",
  lowerIsBetter: true,
  groups: [
    {
      label: "start -> ready",
      bars: rows.map((r) => ({ label: r.name, ...summarize(r.runs.map((x) => Math.round(x.readyMs))) })),
    },
  ],
});
writeResult({
  name: "runtime-memory",
  title: "Operator memory: RSS 2 s after ready (one controller, nothing cached)",
  unit: "MiB",
  lowerIsBetter: true,
  groups: [
    {
      label: "RSS idle",
      bars: rows.map((r) => ({ label: r.name, ...summarize(r.runs.map((x) => Number(x.idle.toFixed(1)))) })),
    },
  ],
});
