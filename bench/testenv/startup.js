// Time from ControlPlane.start() to ready with cached binaries, without and
// with kube-controller-manager (ready then also means the default
// ServiceAccount exists), alternating the two, five runs each by default;
// prints each run and the medians.
// Run: bash scripts/with-node.sh node bench/testenv/startup.js   (after npm run build)
// Needs kube-controller-manager in the binaries directory:
//   bash packages/testenv/tools/controlplane/build.sh --with-controller-manager
import { ControlPlane } from "@tessera/testenv";
import { summarize, writeResult } from "../lib/results.js";

const runs = Number(process.env.RUNS ?? 5);
const variants = [
  { name: "etcd + kube-apiserver", options: {} },
  { name: "etcd + kube-apiserver + kube-controller-manager", options: { controllerManager: true } },
];
const times = variants.map(() => []);
for (let i = 0; i < runs; i++) {
  // Alternate which goes first, so neither always runs on a warmer machine.
  const order = i % 2 === 0 ? [0, 1] : [1, 0];
  for (const v of order) {
    const cp = new ControlPlane(variants[v].options);
    const t0 = performance.now();
    await cp.start();
    const ms = performance.now() - t0;
    times[v].push(ms);
    console.log(`run ${i + 1}, ${variants[v].name}: ${(ms / 1000).toFixed(2)} s`);
    await cp.stop();
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const [v, variant] of variants.entries()) {
  const ts = times[v];
  console.log(
    `median start() to ready, ${variant.name}: ${(median(ts) / 1000).toFixed(2)} s ` +
      `(min ${(Math.min(...ts) / 1000).toFixed(2)}, max ${(Math.max(...ts) / 1000).toFixed(2)}) over ${runs} runs`,
  );
}
console.log(`ratio with/without: ${(median(times[1]) / median(times[0])).toFixed(2)}x`);
writeResult({
  name: "testenv-startup",
  title: "Test control plane: ControlPlane.start() to ready",
  unit: "s",
  lowerIsBetter: true,
  groups: [
    {
      label: "binaries cached",
      bars: variants.map((v, i) => ({
        label: v.name.replace("etcd + kube-apiserver", "apiserver"),
        ...summarize(times[i].map((ms) => ms / 1000)),
      })),
    },
  ],
});
