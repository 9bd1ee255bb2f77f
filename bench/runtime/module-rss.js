// What each module adds to a bare node process's RSS: a child process per
// set of modules imports them, collects garbage twice and reports its RSS;
// ROUNDS rounds (default 3), every set once per round, the median per set.
// Run: bash scripts/with-node.sh node bench/runtime/module-rss.js   (after npm run build)
// A child: node --expose-gc module-rss.js --child <module>...
import { execFileSync } from "node:child_process";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";

if (process.argv[2] === "--child") {
  for (const name of process.argv.slice(3)) await import(name);
  globalThis.gc();
  await new Promise((resolve) => setTimeout(resolve, 200));
  globalThis.gc();
  process.stdout.write(String(process.memoryUsage().rss / 1048576));
  process.exit(0);
}

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const SETS = [
  [],
  ["@opentelemetry/api"],
  ["@opentelemetry/sdk-metrics"],
  ["@opentelemetry/sdk-metrics", "@opentelemetry/exporter-prometheus"],
  ["inversify"],
  ["ajv"],
  ["protobufjs"],
  ["@tessera/runtime"],
];
const self = fileURLToPath(import.meta.url);
const rss = SETS.map(() => []);
for (let r = 0; r < ROUNDS; r++) {
  for (const [i, set] of SETS.entries()) {
    rss[i].push(
      Number(execFileSync(process.execPath, ["--expose-gc", self, "--child", ...set], { encoding: "utf8" })),
    );
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const bare = median(rss[0]);
console.log(
  `median of ${ROUNDS} rounds; load average (1 min) ${loadavg()[0].toFixed(1)}; node ${process.version}`,
);
for (const [i, set] of SETS.entries()) {
  const m = median(rss[i]);
  console.log(
    `${(set.join(" + ") || "node (bare)").padEnd(64)} ${m.toFixed(1).padStart(6)} MiB  +${(m - bare).toFixed(1)}`,
  );
}
