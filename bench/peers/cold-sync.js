// Cold sync beside every peer: 10,000, 50,000 and 100,000 ConfigMaps of about
// 1 KiB, and 10,000 and 50,000 running Pods with a kubelet's status (about
// 6 KiB each as JSON, see data.js), synced into an informer's cache by each contender of bench/peers
// (Tessera on each wire, client-node, client-go and controller-runtime with
// WatchListClient on and off, kube-rs with streaming lists on and off) and by
// the limit (the same watch-list stream received and discarded, on each wire), each in a
// process of its own, managedFields stripped where the contender can.
//
// Per contender and size: time to synced, client CPU, the apiserver's CPU
// for serving it, peak RSS, RSS grown per cached object (and Go's live heap
// per object), and, from one extra round through a FaultProxy, the bytes
// received and the requests made (apiserver_request_total). Each figure is
// the median of ROUNDS rounds (default 3) with min and max; the order of the
// contenders rotates every round. Every contender must report the same
// object count and highest resourceVersion as the others, or the run fails.
//
// Run: bash scripts/with-node.sh node bench/peers/cold-sync.js [--quick]
//      (--quick: 10,000 ConfigMaps and the main contenders only; SIZES=10k-cm,50k-cm,100k-cm,10k-pods,50k-pods; ROUNDS=5 for more rounds;
//       ONLY=name,name to pick contenders by name, or name;name when a name holds a comma;
//       BASELINE=<checkout> to run that checkout's Tessera beside this one's, see below)
import { ControlPlane, FaultProxy, kubeConfigVia } from "@tessera/testenv";
import { apiserverPid, countsSince, cpuMsOf, requestCounts } from "../lib/apiserver.js";
import { buildCargo, buildGo, nodeInformer, syncOnce } from "../lib/contenders.js";
import { summarize, writeResult } from "../lib/results.js";
import { populate, populatePods } from "./data.js";
import { writeFileSync } from "node:fs";

const quick = process.argv.includes("--quick");
const ROUNDS = Number(process.env.ROUNDS ?? 3);
// Names may hold commas ("client-go, watch-list off"): then separate them with ";".
const only = process.env.ONLY?.split(process.env.ONLY.includes(";") ? ";" : ",");
/** The results' name (bench/results/<RESULT>*.json); another name keeps a partial run from replacing a full one. */
const RESULT = process.env.RESULT ?? "peers-cold-sync";
/** Whether ONLY leaves any contender whose name starts with one of `prefixes` (so that its program is built). */
const wanted = (...prefixes) => !only || only.some((n) => prefixes.some((p) => n.startsWith(p)));

/** @type {{ name: string, family: "limit" | "tessera" | "peer", quick?: boolean, command: string[], env: Record<string, string> }[]} */
const contenders = [];
const add = (name, family, command, env, quickToo = false) => {
  if (command && (!only || only.includes(name)))
    contenders.push({ name, family, command, env, quick: quickToo });
};
// The limits: the watch-list stream on each wire, received and discarded; "x limit" is against the fastest.
add("limit JSON", "limit", nodeInformer, { BENCH_IMPL: "limit", BENCH_WATCH_LIST: "1" }, true);
add(
  "limit protobuf",
  "limit",
  nodeInformer,
  { BENCH_IMPL: "limit", BENCH_WIRE: "protobuf", BENCH_WATCH_LIST: "1" },
  true,
);
add("limit protobuf+gzip", "limit", nodeInformer, {
  BENCH_IMPL: "limit",
  BENCH_WIRE: "protobuf",
  BENCH_COMPRESSION: "gzip",
  BENCH_WATCH_LIST: "1",
});
add(
  "Tessera protobuf",
  "tessera",
  nodeInformer,
  { BENCH_IMPL: "tessera", BENCH_WIRE: "protobuf", BENCH_WATCH_LIST: "1" },
  true,
);
// Tessera as an operator ships it: the scaffold's start script (templates/operator/package.json)
// and the example images run node with --max-semi-space-size=8 (V8's young generation at 8 MiB per
// semi-space; Node 24 grows it to 64 MiB by itself). "Tessera protobuf" above runs without the flag,
// so that both figures stay visible.
add(
  "Tessera protobuf, as shipped (--max-semi-space-size=8)",
  "tessera",
  [nodeInformer[0], "--max-semi-space-size=8", ...nodeInformer.slice(1)],
  { BENCH_IMPL: "tessera", BENCH_WIRE: "protobuf", BENCH_WATCH_LIST: "1" },
  true,
);
// BASELINE=<another checkout, built>: the same two Tessera contenders from that checkout too, rotated
// with the others, so that a change is compared with what it changes in one run (on a loaded machine
// two runs differ more than a change does). ONLY names them "baseline Tessera protobuf" and
// "baseline Tessera protobuf, as shipped (--max-semi-space-size=8)".
const baseline = process.env.BASELINE;
if (baseline) {
  const informer = [nodeInformer[0], "--expose-gc", `${baseline}/bench/peers/node/informer.js`];
  const env = { BENCH_IMPL: "tessera", BENCH_WIRE: "protobuf", BENCH_WATCH_LIST: "1" };
  add("baseline Tessera protobuf", "tessera", informer, env, true);
  add(
    "baseline Tessera protobuf, as shipped (--max-semi-space-size=8)",
    "tessera",
    [informer[0], "--max-semi-space-size=8", ...informer.slice(1)],
    env,
    true,
  );
}
add("Tessera protobuf+gzip", "tessera", nodeInformer, {
  BENCH_IMPL: "tessera",
  BENCH_WIRE: "protobuf",
  BENCH_COMPRESSION: "gzip",
  BENCH_WATCH_LIST: "1",
});
add(
  "Tessera protobuf, compact",
  "tessera",
  nodeInformer,
  { BENCH_IMPL: "tessera", BENCH_WIRE: "protobuf", BENCH_WATCH_LIST: "1", BENCH_COMPACT: "1" },
  true,
);
add("Tessera protobuf, compact deflate", "tessera", nodeInformer, {
  BENCH_IMPL: "tessera",
  BENCH_WIRE: "protobuf",
  BENCH_WATCH_LIST: "1",
  BENCH_COMPACT: "deflate",
});
add(
  "Tessera JSON",
  "tessera",
  nodeInformer,
  { BENCH_IMPL: "tessera", BENCH_WIRE: "json", BENCH_WATCH_LIST: "1" },
  true,
);
add("Tessera JSON, LIST+WATCH", "tessera", nodeInformer, {
  BENCH_IMPL: "tessera",
  BENCH_WIRE: "json",
  BENCH_WATCH_LIST: "0",
});
add("client-node", "peer", nodeInformer, { BENCH_IMPL: "client-node", BENCH_WATCH_LIST: "0" }, true);
const clientGo = wanted("client-go", "controller-runtime")
  ? buildGo("peers/client-go", "client-go")
  : undefined;
add("client-go", "peer", clientGo && [clientGo], { BENCH_IMPL: "client-go" }, true);
add("client-go, watch-list off", "peer", clientGo && [clientGo], {
  BENCH_IMPL: "client-go",
  BENCH_WATCH_LIST: "0",
});
add("client-go JSON", "peer", clientGo && [clientGo], {
  BENCH_IMPL: "client-go",
  BENCH_WIRE: "json",
  BENCH_WATCH_LIST: "1",
});
add("controller-runtime", "peer", clientGo && [clientGo], { BENCH_IMPL: "controller-runtime" }, true);
const kubeRs = wanted("kube-rs") ? buildCargo("kube-rs") : undefined;
add("kube-rs streaming lists", "peer", kubeRs && [kubeRs("informer")], { BENCH_WATCH_LIST: "1" }, true);
add("kube-rs", "peer", kubeRs && [kubeRs("informer")], { BENCH_WATCH_LIST: "0" });
const running = quick ? contenders.filter((c) => c.quick) : contenders;

const cp = new ControlPlane();
await cp.start();
try {
  const kubeconfig = cp.writeKubeconfig();
  const proxy = new FaultProxy(cp.apiserverPort);
  await proxy.start();
  const proxied = `${kubeconfig}-proxied`;
  writeFileSync(proxied, kubeConfigVia(cp.kubeConfig, proxy.url).exportConfig(), { mode: 0o600 });
  const apiserver = apiserverPid();
  // Each size adds objects to what the sizes before it loaded; "*" syncs all namespaces.
  /** @typedef {{ label: string, resource: "configmaps" | "pods", namespace: string, load: [string, number][] }} Size */
  /** @type {Size[]} */
  const allSizes = [
    {
      label: "10,000 ConfigMaps",
      resource: "configmaps",
      namespace: "bench-10k",
      load: [["bench-10k", 10_000]],
    },
    { label: "50,000 ConfigMaps", resource: "configmaps", namespace: "*", load: [["bench-40k", 40_000]] },
    { label: "100,000 ConfigMaps", resource: "configmaps", namespace: "*", load: [["bench-50k", 50_000]] },
    { label: "10,000 Pods", resource: "pods", namespace: "pods-10k", load: [["pods-10k", 10_000]] },
    { label: "50,000 Pods", resource: "pods", namespace: "*", load: [["pods-40k", 40_000]] },
  ];
  // SIZES=10k-cm,50k-cm,100k-cm,10k-pods,50k-pods picks some (each loads what it adds to the ones before).
  const picked = process.env.SIZES?.split(",");
  const sizeKey = (s) => `${s.label.split(",")[0]}k-${s.resource === "pods" ? "pods" : "cm"}`;
  const sizes = allSizes.filter((s) =>
    quick ? s.label === "10,000 ConfigMaps" : !picked || picked.includes(sizeKey(s)),
  );
  const rows = [];
  /** @type {Set<Size>} */
  const loaded = new Set();
  for (const size of sizes) {
    const t0 = performance.now();
    const before = allSizes.slice(0, allSizes.indexOf(size)).filter((s) => s.resource === size.resource);
    // A size left out still loads its objects when a larger one of the same kind is picked.
    for (const skipped of before.filter((s) => !sizes.includes(s) && !loaded.has(s))) {
      for (const [namespace, count] of skipped.load)
        await (skipped.resource === "pods" ? populatePods : populate)(cp, namespace, count);
      loaded.add(skipped);
    }
    for (const [namespace, count] of size.load)
      await (size.resource === "pods" ? populatePods : populate)(cp, namespace, count);
    console.log(`\n== ${size.label}: loaded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const env = {
      KUBECONFIG: kubeconfig,
      BENCH_RESOURCE: size.resource,
      BENCH_NAMESPACE: size.namespace,
      BENCH_STRIP_MANAGED_FIELDS: "1",
    };
    /** @type {Record<string, any[]>} */
    const runs = Object.fromEntries(running.map((c) => [c.name, []]));
    /** @type {Record<string, { bytes: number, requests: Record<string, number> } | { unsupported: string }>} */
    const wire = {};
    // The first round goes through the proxy, counting bytes and requests; it also warms the
    // apiserver's caches, so it is not timed.
    for (const c of running) {
      const before = await requestCounts(cp, size.resource);
      proxy.resetStats();
      const synced = await syncOnce(c, { ...env, KUBECONFIG: proxied });
      await new Promise((r) => setTimeout(r, 200)); // a watch is counted when it ends
      if ("unsupported" in synced) {
        wire[c.name] = synced;
        console.log(`${c.name}: not supported: ${synced.unsupported}`);
        continue;
      }
      wire[c.name] = {
        bytes: proxy.stats.bytesDown,
        requests: countsSince(before, await requestCounts(cp, size.resource)),
      };
      console.log(`${c.name}: ${JSON.stringify(wire[c.name])}`);
    }
    const supported = running.filter((c) => !("unsupported" in wire[c.name]));
    for (let r = 0; r < ROUNDS; r++) {
      const order = supported.map((_, i) => supported[(i + r) % supported.length]);
      for (const c of order) {
        const cpu0 = apiserver === undefined ? undefined : cpuMsOf(apiserver);
        const synced = await syncOnce(c, env);
        if ("unsupported" in synced) throw new Error(`${c.name} stopped supporting its own settings`);
        synced.apiserverCpuMs = cpu0 === undefined ? undefined : Math.round(cpuMsOf(apiserver) - cpu0);
        runs[c.name].push(synced);
        console.log(`round ${r + 1} ${c.name}: ${JSON.stringify(synced)}`);
      }
      // The same work: every contender holds the same objects at the same resourceVersion (a limit
      // only counts them).
      const latest = supported.map((c) => [c, runs[c.name].at(-1)]);
      const [, first] = latest.find(([c]) => c.family !== "limit") ?? latest[0];
      for (const [c, s] of latest) {
        const name = c.name;
        if (
          s.objects !== first.objects ||
          (c.family !== "limit" && s.resourceVersion !== first.resourceVersion)
        )
          throw new Error(
            `${name} synced ${s.objects} objects at ${s.resourceVersion}, another contender ${first.objects} at ${first.resourceVersion}`,
          );
      }
    }
    for (const c of supported) {
      const all = runs[c.name];
      const pick = (f) => summarize(all.map(f));
      rows.push({
        size: size.label,
        name: c.name,
        family: c.family,
        objects: all[0].objects,
        resourceVersion: all[0].resourceVersion,
        ms: pick((s) => s.ms),
        cpuMs: pick((s) => s.cpuMs),
        apiserverCpuMs: apiserver === undefined ? undefined : pick((s) => s.apiserverCpuMs),
        peakRssMiB: pick((s) => s.peakRssMiB),
        bytesPerObject: pick((s) => Math.round(((s.rssMiB - s.baselineRssMiB) * 2 ** 20) / s.objects)),
        heapBytesPerObject:
          all[0].heapMiB === undefined
            ? undefined
            : pick((s) => Math.round(((s.heapMiB - (s.baselineHeapMiB ?? 0)) * 2 ** 20) / s.objects)),
        ...wire[c.name],
      });
    }
    for (const c of running.filter((c) => "unsupported" in wire[c.name]))
      rows.push({ size: size.label, name: c.name, family: c.family, ...wire[c.name] });
  }
  await proxy.stop();
  report(
    rows,
    sizes.map((s) => s.label),
  );
} finally {
  await cp.stop();
}

function report(rows, sizes) {
  const f = (x) => (x === undefined ? "n/a" : String(x));
  console.log(
    `\n| data | contender | time to synced, median (min-max) | x best peer | x limit | client CPU | apiserver CPU | peak RSS | RSS per object | bytes received | requests |`,
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|---|");
  for (const size of sizes) {
    const here = rows.filter((r) => r.size === size && r.ms);
    const bestPeer = here.filter((r) => r.family === "peer").sort((a, b) => a.ms.median - b.ms.median)[0];
    const limit = here.filter((r) => r.family === "limit").sort((a, b) => a.ms.median - b.ms.median)[0];
    for (const r of rows.filter((r) => r.size === size)) {
      if (!r.ms) {
        console.log(`| ${size} | ${r.name} | not supported: ${r.unsupported} | | | | | | | | |`);
        continue;
      }
      const ratio = (base) => (base ? `${(r.ms.median / base.ms.median).toFixed(2)}` : "n/a");
      const heap = r.heapBytesPerObject ? ` (heap ${r.heapBytesPerObject.median} B)` : "";
      console.log(
        `| ${size} | ${r.name} | ${r.ms.median} ms (${r.ms.min}-${r.ms.max}) | ${ratio(bestPeer)} | ${ratio(limit)} | ${r.cpuMs.median} ms | ${f(r.apiserverCpuMs?.median)} ms | ${r.peakRssMiB.median} MiB | ${r.bytesPerObject.median} B${heap} | ${(r.bytes / 2 ** 20).toFixed(1)} MiB | ${Object.entries(
          r.requests,
        )
          .map(([v, n]) => `${v} ${n}`)
          .join(", ")} |`,
      );
    }
    if (bestPeer) console.log(`${size}: best peer ${bestPeer.name}, ${bestPeer.ms.median} ms`);
  }
  const chart = (name, title, unit, metric, scale = 1) =>
    writeResult({
      name,
      title,
      unit,
      lowerIsBetter: true,
      groups: sizes.map((size) => ({
        label: size,
        bars: rows
          .filter((r) => r.size === size && r.ms && metric(r))
          .map((r) => {
            const s = metric(r);
            const k = (x) => Number((x * scale).toPrecision(4));
            return { label: r.name, median: k(s.median), min: k(s.min), max: k(s.max), runs: s.runs.map(k) };
          }),
      })),
      note: `median of ${ROUNDS} rounds, whiskers min to max; managedFields stripped where the contender can`,
      rows,
    });
  chart(RESULT, "Cold sync beside every peer: start to synced", "s", (r) => r.ms, 1 / 1000);
  chart(`${RESULT}-rss`, "Cold sync beside every peer: peak RSS", "MiB", (r) => r.peakRssMiB);
  chart(
    `${RESULT}-apiserver-cpu`,
    "Cold sync beside every peer: the apiserver's CPU",
    "ms",
    (r) => r.apiserverCpuMs,
  );
  chart(`${RESULT}-client-cpu`, "Cold sync beside every peer: the client's CPU", "ms", (r) => r.cpuMs);
  chart(
    `${RESULT}-per-object`,
    "Cold sync beside every peer: RSS grown per cached object",
    "B",
    (r) => r.bytesPerObject,
  );
  if (rows.some((r) => r.heapBytesPerObject))
    chart(
      `${RESULT}-heap-per-object`,
      "Cold sync beside every peer: live heap per cached object (Node and Go)",
      "B",
      (r) => r.heapBytesPerObject,
    );
}
