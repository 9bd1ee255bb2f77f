// Time from ControlPlane.start() to an authenticated /readyz with cached
// binaries, five times; prints each and the median.
// Run: bash scripts/with-node.sh node bench/testenv/startup.js   (after npm run build)
import { ControlPlane } from "@tessera/testenv";

const runs = Number(process.env.RUNS ?? 5);
const times = [];
for (let i = 0; i < runs; i++) {
  const cp = new ControlPlane();
  const t0 = performance.now();
  await cp.start();
  const ms = performance.now() - t0;
  times.push(ms);
  console.log(`run ${i + 1}: ${(ms / 1000).toFixed(2)} s`);
  await cp.stop();
}
times.sort((a, b) => a - b);
console.log(
  `median start() to ready: ${(times[Math.floor(times.length / 2)] / 1000).toFixed(2)} s over ${runs} runs`,
);
