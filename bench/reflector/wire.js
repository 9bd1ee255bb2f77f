// The wire: cold sync of ConfigMaps by Tessera's reflector over JSON and
// over Kubernetes protobuf, each with and without `compression: "gzip"`, by
// watch-list and by LIST + WATCH (JSON), on the loopback and on a simulated
// slow link (FaultProxy.setBandwidth), each
// variant in its own child process (sync-variant.js), rounds rotated. Every
// request goes through a FaultProxy, which counts the bytes on the wire; the
// kube-apiserver's CPU time is read from /proc, since compressing is the
// server's cost. The ConfigMaps carry text that compresses about as real
// configuration does (words, not one repeated letter).
// Run: bash scripts/with-node.sh npm run build && bash scripts/with-node.sh node bench/reflector/wire.js
//      (RUNS=3 by default; LINK_MBPS=100 the slow link's megabits per second)
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ControlPlane, FaultProxy, kubeConfigVia } from "@tessera/testenv";
import { apiserverPid, cpuMsOf, pool, post } from "../lib/apiserver.js";
import { summarize, writeResult } from "../lib/results.js";

const RUNS = Number(process.env.RUNS ?? 3);
const LINK_MBPS = Number(process.env.LINK_MBPS ?? 100);
const VARIANTS = (
  process.env.VARIANTS ??
  "tessera-watch-list,tessera-watch-list-gzip,tessera-watch-list-protobuf,tessera-watch-list-protobuf-gzip,tessera-list-watch,tessera-list-watch-gzip"
).split(",");
const child = fileURLToPath(new URL("./sync-variant.js", import.meta.url));

// Deterministic text from a small vocabulary: gzip gets it to about a third, as it does config files.
const WORDS =
  "server port timeout retries replicas image registry region zone cache size limit enabled false true " +
  "endpoint https path api v1 v2 key value user admin service account token secret log level debug info " +
  "warn error metrics interval seconds minutes hours database host name pool max min connections";
const vocabulary = WORDS.split(" ");
function filler(seed, length) {
  let x = seed * 2654435761;
  const out = [];
  let n = 0;
  while (n < length) {
    x = (x * 1103515245 + 12345) >>> 0;
    const word = vocabulary[x % vocabulary.length];
    out.push(word, x % 7 === 0 ? "\n" : x % 3 === 0 ? "=" : " ");
    n += word.length + 1;
  }
  return out.join("").slice(0, length);
}

function runChild(variant, kubeconfig, namespace, expected) {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [child, variant, kubeconfig, namespace, String(expected)],
      { maxBuffer: 1 << 20, timeout: 300_000 },
      (err, stdout, stderr) => {
        if (err)
          return reject(
            new Error(`${variant}: ${err.message} (proxy ${JSON.stringify(proxy.stats)})\n${stderr}`),
          );
        resolve(JSON.parse(stdout.trim().split("\n").at(-1)));
      },
    );
  });
}

const cp = new ControlPlane();
await cp.start();
const proxy = new FaultProxy(cp.apiserverPort);
await proxy.start();
try {
  const dir = mkdtempSync(join(tmpdir(), "tessera-bench-wire-"));
  const kubeconfig = join(dir, "kubeconfig");
  writeFileSync(kubeconfig, kubeConfigVia(cp.kubeConfig, proxy.url).exportConfig(), { mode: 0o600 });
  const t0 = performance.now();
  for (const [namespace, count] of [
    ["gzip-10k", 10_000],
    ["gzip-40k", 40_000],
  ]) {
    await post(cp, "/api/v1/namespaces", { metadata: { name: namespace } });
    await pool(count, 64, (i) =>
      post(cp, `/api/v1/namespaces/${namespace}/configmaps`, {
        metadata: { name: `cm-${String(i).padStart(6, "0")}`, labels: { app: "bench" } },
        data: { "app.conf": filler(i + 1, 820), index: String(i) },
      }),
    );
  }
  console.log(`created 50,000 ConfigMaps in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const apiserver = apiserverPid();
  const scenarios = [
    { label: "10,000, loopback", namespace: "gzip-10k", expected: 10_000 },
    { label: "50,000, loopback", namespace: "*", expected: 50_000 },
    { label: `10,000, ${LINK_MBPS} Mbit/s link`, namespace: "gzip-10k", expected: 10_000, mbps: LINK_MBPS },
  ];
  const rows = [];
  for (const scenario of scenarios) {
    proxy.setBandwidth(scenario.mbps ? (scenario.mbps * 1e6) / 8 : undefined);
    const results = Object.fromEntries(VARIANTS.map((v) => [v, []]));
    for (const v of VARIANTS) await runChild(v, kubeconfig, scenario.namespace, scenario.expected); // warm-up
    for (let r = 0; r < RUNS; r++) {
      const order = VARIANTS.map((_, i) => VARIANTS[(i + r) % VARIANTS.length]);
      for (const v of order) {
        proxy.resetStats();
        const before = apiserver === undefined ? undefined : cpuMsOf(apiserver);
        const result = await runChild(v, kubeconfig, scenario.namespace, scenario.expected);
        if (result.objects < scenario.expected) throw new Error(`${v} synced ${result.objects}`);
        result.apiserverCpuMs = before === undefined ? undefined : Math.round(cpuMsOf(apiserver) - before);
        result.mb = proxy.stats.bytesDown / 1e6;
        results[v].push(result);
        console.log(`${scenario.label} run ${r + 1}: ${JSON.stringify(result)}`);
      }
    }
    for (const v of VARIANTS) rows.push({ scenario: scenario.label, variant: v, all: results[v] });
  }
  const med = (xs) => summarize(xs).median;
  console.log("");
  console.log(
    `| scenario | variant | cold sync (median of ${RUNS}) | on the wire | client CPU | apiserver CPU | peak RSS |`,
  );
  console.log("|---|---|---|---|---|---|---|");
  for (const r of rows) {
    const cpu = r.all.map((x) => x.apiserverCpuMs).filter((x) => x !== undefined);
    console.log(
      `| ${r.scenario} | ${r.variant} | ${med(r.all.map((x) => x.ms))} ms | ${med(r.all.map((x) => x.mb)).toFixed(1)} MB | ` +
        `${med(r.all.map((x) => x.cpuMs))} ms | ${cpu.length ? `${med(cpu)} ms` : "n/a"} | ${med(r.all.map((x) => x.peakRssMiB))} MiB |`,
    );
  }
  const groups = (key, scale) =>
    scenarios.map((s) => ({
      label: s.label,
      bars: rows
        .filter((r) => r.scenario === s.label)
        .map((r) => ({
          label: r.variant,
          ...summarize(r.all.map((x) => Number(((x[key] ?? 0) * scale).toFixed(2)))),
        })),
    }));
  writeResult({
    name: "wire-sync-time",
    title: "Cold sync over JSON and protobuf, with and without gzip: start to synced",
    unit: "s",
    lowerIsBetter: true,
    groups: groups("ms", 1 / 1000),
    note: `median of ${RUNS} rounds; every request through a FaultProxy`,
  });
  if (apiserver !== undefined) {
    writeResult({
      name: "wire-apiserver-cpu",
      title: "Cold sync over JSON and protobuf, with and without gzip: kube-apiserver CPU",
      unit: "s",
      lowerIsBetter: true,
      groups: groups("apiserverCpuMs", 1 / 1000),
      note: `median of ${RUNS} rounds; over each child's whole life, about 16 ms/s of it idle work`,
    });
  }
} finally {
  await proxy.stop();
  await cp.stop();
}
