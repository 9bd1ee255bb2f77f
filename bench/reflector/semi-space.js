// V8's young generation and the cold sync: 10,000 ConfigMaps of about 1 KiB
// synced by Tessera's reflector over protobuf watch-list (as the runtime
// ships), each run in its own process with a different --max-semi-space-size
// (MiB per semi-space; none: V8's default, which on this machine, Node 24,
// grows each semi-space up to 64 MiB), one warm-up round, then ROUNDS rounds
// (default 3) in a rotated order; median time to synced, client CPU and
// peak RSS per setting.
// Run: bash scripts/with-node.sh node bench/reflector/semi-space.js   (after npm run build)
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ControlPlane } from "@tessera/testenv";
import { pool, post } from "../lib/apiserver.js";

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const SETTINGS = ["", "--max-semi-space-size=8", "--max-semi-space-size=16", "--max-semi-space-size=32"];
const FILLER = "x".repeat(820);
const child = fileURLToPath(new URL("./sync-variant.js", import.meta.url));

const sync = (flag, kubeconfig) =>
  new Promise((resolve, reject) => {
    const args = [
      ...(flag ? [flag] : []),
      child,
      "tessera-watch-list-protobuf",
      kubeconfig,
      "bench-10k",
      "10000",
    ];
    execFile(process.execPath, args, { maxBuffer: 1 << 20, timeout: 600_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${flag}: ${err.message}\n${stderr}`));
      resolve(JSON.parse(stdout.trim().split("\n").at(-1)));
    });
  });
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const cp = new ControlPlane();
await cp.start();
try {
  const kubeconfig = join(mkdtempSync(join(tmpdir(), "tessera-bench-")), "kubeconfig");
  writeFileSync(kubeconfig, cp.kubeConfig.exportConfig(), { mode: 0o600 });
  await post(cp, "/api/v1/namespaces", { metadata: { name: "bench-10k" } });
  await pool(10_000, 64, (i) =>
    post(cp, "/api/v1/namespaces/bench-10k/configmaps", {
      metadata: { name: `cm-${String(i).padStart(6, "0")}`, labels: { app: "bench", shard: String(i % 16) } },
      data: { filler: FILLER, index: String(i) },
    }),
  );
  for (const flag of SETTINGS) await sync(flag, kubeconfig);
  const results = Object.fromEntries(SETTINGS.map((s) => [s, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (let i = 0; i < SETTINGS.length; i++) {
      const flag = SETTINGS[(i + r) % SETTINGS.length];
      const result = await sync(flag, kubeconfig);
      if (result.objects < 10_000) throw new Error(`${flag} synced ${result.objects} < 10000`);
      results[flag].push(result);
    }
  }
  console.log(
    `\n10,000 ConfigMaps, median of ${ROUNDS} rotated rounds; load average (1 min) ${loadavg()[0].toFixed(1)}`,
  );
  console.log("setting                         cold sync   client CPU   peak RSS   (runs, ms)");
  for (const flag of SETTINGS) {
    const runs = results[flag];
    console.log(
      `${(flag || "(V8 default)").padEnd(30)} ${`${median(runs.map((x) => x.ms))} ms`.padStart(10)} ${`${median(runs.map((x) => x.cpuMs))} ms`.padStart(12)} ${`${median(runs.map((x) => x.peakRssMiB))} MiB`.padStart(10)}   ${runs.map((x) => x.ms).join(", ")}`,
    );
  }
} finally {
  await cp.stop();
}
