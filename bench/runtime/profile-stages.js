// Where a Tessera replica's CPU goes per watch event, by stage of the path
// from the watch stream to the reconcile, from a V8 CPU profile that
// throughput.js wrote (BENCH_CPU_PROF=dir). Each sample goes to the innermost
// frame of its stack that belongs to a stage (a sample anywhere under the
// bench replica's own code goes to it: its stdout line and handler body), so
// Node's internals count for the Tessera code that called them. Samples in
// the first FROM_MS milliseconds of the profile (start-up and the initial
// list) are left out; idle time is not counted.
//
// Run: bash scripts/with-node.sh node bench/runtime/profile-stages.js <file.cpuprofile> [events=10000] [fromMs=2000]
import { readFileSync } from "node:fs";

const [file, eventsArg, fromArg] = process.argv.slice(2);
if (!file) {
  console.error("usage: node bench/runtime/profile-stages.js <file.cpuprofile> [events=10000] [fromMs=2000]");
  process.exit(2);
}
const events = Number(eventsArg ?? 10_000);
const fromUs = Number(fromArg ?? 2000) * 1000;
const profile = JSON.parse(readFileSync(file, "utf8"));

const BENCH = "bench replica (handler body, stdout line)";
/** @type {[stage: string, test: (fn: string, url: string) => boolean][]} innermost match wins, in this order */
const stages = [
  ["GC", (fn) => fn === "(garbage collector)"],
  ["idle", (fn) => fn === "(idle)"],
  ["start-up (module loading)", (fn, url) => url.startsWith("node:internal/modules/")],
  [
    "spans and metrics (OpenTelemetry API, metric instruments)",
    (fn, url) => url.includes("@opentelemetry") || /metrics|prometheus/.test(url.split("/").pop() ?? ""),
  ],
  [
    "work queue (add/get/done, rate limiter, worker pool on p-queue)",
    (fn, url) => url.includes("/workqueue/") || url.includes("/p-queue/"),
  ],
  [
    "reconcile wrapper (reconcileKey: context, span, logger)",
    (fn, url) =>
      url.includes("/runtime/") && /reconcileKey|reconcileOrCleanUp|succeeded|requestFromKey/.test(fn),
  ],
  ["controller predicates and mapping (event -> key)", (fn, url) => url.includes("/runtime/")],
  ["informer (handler delivery, resync bookkeeping)", (fn, url) => url.includes("/informers/")],
  [
    "decoding (protobuf or JSON)",
    (fn, url) =>
      (url.includes("/reflector/dist/src/proto/") && !url.includes("length-delimited")) || fn === "parse",
  ],
  [
    "reflector (DeltaFIFO, store, indexes)",
    (fn, url) => url.includes("/reflector/") && !/kube-lister-watcher|length-delimited|ndjson/.test(url),
  ],
  [
    "watch stream I/O (socket, TLS, HTTP, framing)",
    (fn, url) =>
      /kube-lister-watcher|length-delimited|ndjson|\/client\//.test(url) ||
      /^node:(_http|net|tls|_tls|zlib|internal\/streams|internal\/stream_base)/.test(url),
  ],
  ["core (logging, helpers)", (fn, url) => url.includes("/core/")],
];
const OTHER = "other (event loop, microtasks, timers)";

const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
const stageOf = new Map();
function classify(id) {
  let stage = stageOf.get(id);
  if (stage !== undefined) return stage;
  const stack = [];
  for (let x = id; x !== undefined; x = parent.get(x)) stack.push(nodes.get(x).callFrame);
  if (stack.some((f) => f.url.includes("bench/runtime/tessera-replica"))) stage = BENCH;
  else {
    const frame = stack.find((f) => stages.some(([, test]) => test(f.functionName, f.url)));
    stage = frame ? stages.find(([, test]) => test(frame.functionName, frame.url))[0] : OTHER;
  }
  stageOf.set(id, stage);
  return stage;
}

/** @type {Map<string, number>} stage -> µs */
const time = new Map();
let t = profile.startTime;
for (let i = 0; i < profile.samples.length; i++) {
  t += profile.timeDeltas[i];
  if (t - profile.startTime < fromUs) continue;
  const stage = classify(profile.samples[i]);
  time.set(stage, (time.get(stage) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
}
const idle = time.get("idle") ?? 0;
time.delete("idle");
const busy = [...time.values()].reduce((a, b) => a + b, 0);
const perThousand = (us) => (us / 1000 / (events / 1000)).toFixed(1);
console.log(
  `${file}: from ${fromUs / 1e6} s, ${(busy / 1000).toFixed(0)} ms busy, ${(idle / 1000).toFixed(0)} ms idle (${((100 * idle) / (idle + busy)).toFixed(0)}%), ${events} events`,
);
console.log("| stage | ms CPU per 1,000 events | share |\n|---|---:|---:|");
for (const [stage, us] of [...time].sort((a, b) => b[1] - a[1]))
  console.log(`| ${stage} | ${perThousand(us)} | ${((100 * us) / busy).toFixed(1)}% |`);
console.log(`| total | ${perThousand(busy)} | 100% |`);
