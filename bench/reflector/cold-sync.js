// Cold sync of 10,000 and 50,000 ConfigMaps of about 1 KiB from a real
// kube-apiserver (@tessera/testenv), each variant in its own child process:
// Tessera watch-list (reflector into an IndexedStore, and through a DeltaFIFO
// as an informer runs it), Tessera LIST + WATCH, @kubernetes/client-node's
// informer, and the limit (the same watch-list stream received and
// discarded). Each variant runs RUNS times per size, interleaved, each round
// in a rotated order (with RUNS=5 every variant runs once in every position); the median
// time and the median peak RSS are reported, with ratios, and the median CPU
// time of the client (during the sync) and of the kube-apiserver (over the
// child's whole life, from /proc on Linux; about 16 ms/s of it is the
// apiserver's own idle work), to show which side a sync waits on.
// Run: bash scripts/with-node.sh npm run build && bash scripts/with-node.sh node bench/reflector/cold-sync.js
//      (RUNS=5 to change the repetitions; needs the control-plane binaries, see packages/testenv)
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ControlPlane } from "@tessera/testenv";
import { summarize, writeResult } from "../lib/results.js";
import { apiserverPid, cpuMsOf, pool, post } from "../lib/apiserver.js";

const RUNS = Number(process.env.RUNS ?? 3);
const VARIANTS = [
  "limit",
  "tessera-watch-list",
  "tessera-watch-list+fifo",
  "tessera-list-watch",
  "client-node-informer",
];
const FILLER = "x".repeat(820); // with its metadata, a ConfigMap of about 1 KiB as JSON
const child = fileURLToPath(new URL("./sync-variant.js", import.meta.url));

async function populate(cp, namespace, count) {
  await post(cp, "/api/v1/namespaces", { metadata: { name: namespace } });
  await pool(count, 64, (i) =>
    post(cp, `/api/v1/namespaces/${namespace}/configmaps`, {
      metadata: { name: `cm-${String(i).padStart(6, "0")}`, labels: { app: "bench", shard: String(i % 16) } },
      data: { filler: FILLER, index: String(i) },
    }),
  );
}

async function runVariant(variant, kubeconfig, namespace, expected, apiserver) {
  const before = apiserver === undefined ? undefined : cpuMsOf(apiserver);
  const result = await runChild(variant, kubeconfig, namespace, expected);
  result.apiserverCpuMs = before === undefined ? undefined : Math.round(cpuMsOf(apiserver) - before);
  return result;
}

function runChild(variant, kubeconfig, namespace, expected) {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [child, variant, kubeconfig, namespace, String(expected)],
      { maxBuffer: 1 << 20, timeout: 600_000 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`${variant}: ${err.message}\n${stderr}`));
        resolve(JSON.parse(stdout.trim().split("\n").at(-1)));
      },
    );
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

const cp = new ControlPlane();
await cp.start();
try {
  const dir = mkdtempSync(join(tmpdir(), "tessera-bench-"));
  const kubeconfig = join(dir, "kubeconfig");
  writeFileSync(kubeconfig, cp.kubeConfig.exportConfig(), { mode: 0o600 });
  const t0 = performance.now();
  // 10,000 in one namespace; 40,000 more in another: all namespaces hold 50,000 (plus the few the
  // apiserver creates itself).
  await populate(cp, "bench-10k", 10_000);
  await populate(cp, "bench-40k", 40_000);
  console.log(`created 50,000 ConfigMaps in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const apiserver = apiserverPid();
  if (apiserver === undefined)
    console.log("no /proc entry for the kube-apiserver: its CPU time is not shown");
  const sizes = [
    { label: "10,000", namespace: "bench-10k", expected: 10_000 },
    { label: "50,000", namespace: "*", expected: 50_000 },
  ];
  const rows = [];
  for (const size of sizes) {
    const results = Object.fromEntries(VARIANTS.map((v) => [v, []]));
    // One warm-up round (the apiserver's caches, the page cache), not counted.
    for (const v of VARIANTS) await runVariant(v, kubeconfig, size.namespace, size.expected, apiserver);
    for (let r = 0; r < RUNS; r++) {
      // Each round starts one variant later, so that no variant always follows the same one: a run
      // leaves garbage in the apiserver whose collection lands in the next run.
      const order = VARIANTS.map((_, i) => VARIANTS[(i + r) % VARIANTS.length]);
      for (const v of order) {
        const result = await runVariant(v, kubeconfig, size.namespace, size.expected, apiserver);
        if (result.objects < size.expected)
          throw new Error(`${v} synced ${result.objects} < ${size.expected}`);
        results[v].push(result);
        console.log(`${size.label} run ${r + 1}: ${JSON.stringify(result)}`);
      }
    }
    const limitMs = median(results.limit.map((x) => x.ms));
    for (const v of VARIANTS) {
      rows.push({
        size: size.label,
        variant: v,
        ms: median(results[v].map((x) => x.ms)),
        rss: median(results[v].map((x) => x.peakRssMiB)),
        cpu: median(results[v].map((x) => x.cpuMs)),
        apiserverCpu: apiserver === undefined ? undefined : median(results[v].map((x) => x.apiserverCpuMs)),
        limitMs,
        runs: results[v].map((x) => x.ms),
        all: results[v],
      });
    }
  }
  const bars = (key, scale) => (size) =>
    VARIANTS.map((v) => {
      const r = rows.find((x) => x.size === size && x.variant === v);
      return { label: v, ...summarize(r.all.map((x) => Number((x[key] * scale).toFixed(2)))) };
    });
  writeResult({
    name: "reflector-cold-sync",
    title: "Cold sync of ConfigMaps: start to synced",
    unit: "s",
    lowerIsBetter: true,
    groups: sizes.map((s) => ({ label: `${s.label} objects`, bars: bars("ms", 1 / 1000)(s.label) })),
    note: `median of ${RUNS} rounds; limit: the same stream read and discarded`,
  });
  writeResult({
    name: "reflector-cold-sync-rss",
    title: "Cold sync of ConfigMaps: peak RSS",
    unit: "MiB",
    lowerIsBetter: true,
    groups: sizes.map((s) => ({ label: `${s.label} objects`, bars: bars("peakRssMiB", 1)(s.label) })),
    note: `median of ${RUNS} rounds`,
  });
  const tesseraAt = (size) => rows.find((r) => r.size === size && r.variant === "tessera-watch-list").ms;
  console.log("");
  console.log(
    `| objects | variant | cold sync (median of ${RUNS}) | runs (ms) | x limit | client-node / this | client CPU | apiserver CPU | peak RSS |`,
  );
  console.log("|---|---|---|---|---|---|---|---|---|");
  for (const r of rows) {
    const clientNode = rows.find((x) => x.size === r.size && x.variant === "client-node-informer").ms;
    console.log(
      `| ${r.size} | ${r.variant} | ${r.ms} ms | ${r.runs.join(", ")} | ${(r.ms / r.limitMs).toFixed(2)} | ${(clientNode / r.ms).toFixed(2)} | ${r.cpu} ms | ${r.apiserverCpu === undefined ? "n/a" : `${r.apiserverCpu} ms`} | ${r.rss} MiB |`,
    );
  }
  console.log("");
  for (const size of ["10,000", "50,000"]) {
    const cn = rows.find((r) => r.size === size && r.variant === "client-node-informer").ms;
    const lim = rows.find((r) => r.size === size && r.variant === "limit").ms;
    console.log(
      `${size}: Tessera watch-list is ${(tesseraAt(size) / lim).toFixed(2)}x the limit and ${(cn / tesseraAt(size)).toFixed(2)}x faster than the client-node informer`,
    );
  }
} finally {
  await cp.stop();
}
