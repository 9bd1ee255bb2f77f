// Runs every benchmark in turn (npm run bench). Each prints its own table and
// ratios and writes its result as JSON and an SVG plot to bench/results/;
// at the end bench/plot.js publishes them to docs/plots/. See
// docs/benchmarks.md for the published figures and what each measures. Pick some with: npm run bench -- reflector workqueue
// `npm run bench -- --quick` runs a short subset, meant to take under ten
// minutes (not yet timed): the peers' cold sync (10,000 objects), churn
// (1,000 writes/s for 10 s) and fan-out (1 and 4 members), each with its
// main contenders.
// Needs a build first (npm run build) and the control-plane binaries
// (npm run controlplane), which this script resolves itself.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const suites = {
  testenv: ["testenv/startup.js"],
  reflector: ["reflector/cold-sync.js", "reflector/decode.js", "reflector/wire.js"],
  informers: ["informers/memory.js"],
  workqueue: ["workqueue/run.js"],
  // sharding/owned.js runs the built sharded-tenants example (npm run build:examples).
  sharding: ["sharding/hash.js", "sharding/movement.js", "sharding/convergence.js", "sharding/owned.js"],
  runtime: ["runtime/startup.js", "runtime/throughput.js"],
  // Beside client-go, controller-runtime, kube-rs and client-node (bench/peers/README.md).
  peers: ["peers/cold-sync.js", "peers/churn.js", "peers/fan-out.js"],
  // Compiled with its package (it reuses the package's test helpers); 5 runs per scenario here, 20 in docs.
  "leader-election": [["../packages/leader-election/dist/bench/failover.measure.js", "--runs", "5"]],
};
const quick = process.argv.includes("--quick");
const wanted = process.argv.slice(2).filter((a) => a !== "--quick");
if (quick && wanted.length === 0) wanted.push("peers");
for (const name of wanted) {
  if (!(name in suites)) {
    console.error(`unknown benchmark "${name}"; choose from: ${Object.keys(suites).join(", ")}`);
    process.exit(2);
  }
}
const env = { ...process.env };
if (!env.TESSERA_CONTROLPLANE_DIR && !env.KUBEBUILDER_ASSETS) {
  const build = spawnSync(
    "bash",
    [join(here, "../packages/testenv/tools/controlplane/build.sh"), "--with-controller-manager"],
    {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  if (build.status !== 0) process.exit(build.status ?? 1);
  env.TESSERA_CONTROLPLANE_DIR = build.stdout.trim().split("\n").pop();
}
let failed = 0;
for (const [name, scripts] of Object.entries(suites)) {
  if (wanted.length && !wanted.includes(name)) continue;
  for (const entry of scripts) {
    const [script, ...args] = Array.isArray(entry) ? entry : [entry];
    const all = quick && script.startsWith("peers/") ? [...args, "--quick"] : args;
    console.log(`\n=== ${name}: ${[script, ...all].join(" ")}`);
    const r = spawnSync(process.execPath, [join(here, script), ...all], { stdio: "inherit", env });
    if (r.status !== 0) {
      failed++;
      console.error(`${script} exited with ${r.status ?? r.signal}`);
    }
  }
}
// Every result's JSON and SVG into docs/plots/, where docs/benchmarks.md shows them.
spawnSync(process.execPath, [join(here, "plot.js"), "--publish"], { stdio: "inherit" });
process.exit(failed ? 1 : 0);
