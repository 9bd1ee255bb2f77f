// A test control plane for trying a contender by hand: starts one, loads
// COUNT ConfigMaps of about 1 KiB into the namespace "bench" (default 1000),
// prints "KUBECONFIG=<path>", then loads PODS running Pods (data.js) into the namespace
// "bench-pods" (default none), and waits until killed (Ctrl-C stops it).
// Run: bash scripts/with-node.sh node bench/peers/serve.js [COUNT] [--pods=PODS] [--gate-off]
//      (--gate-off turns the apiserver's ShardedListAndWatch gate off; it is on by default)
import { ControlPlane } from "@tessera/testenv";
import { populate, populatePods } from "./data.js";

const count = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 1000);
const pods = Number(process.argv.find((a) => a.startsWith("--pods="))?.slice("--pods=".length) ?? 0);
const cp = new ControlPlane({ featureGates: { ShardedListAndWatch: !process.argv.includes("--gate-off") } });
await cp.start();
const stop = async () => {
  await cp.stop();
  process.exit(0);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
await populate(cp, "bench", count);
console.log(`KUBECONFIG=${cp.writeKubeconfig()}`);
console.log(`${count} ConfigMaps in namespace "bench"`);
if (pods > 0) {
  await populatePods(cp, "bench-pods", pods);
  console.log(`${pods} Pods in namespace "bench-pods"`);
}
console.log("Ctrl-C to stop");
await new Promise(() => {});
