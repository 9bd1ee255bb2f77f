// Benchmarks of @tessera/workqueue, in one run:
//  1. add/get/done cycles per second, 10,000 distinct keys, 1,000,000 cycles,
//     1 and 8 workers, against client-go's workqueue (the Go program in ./go,
//     built from the Go module proxy, k8s.io/client-go v0.37.2), same cycles;
//     plus one worker that uses tryGet() and awaits get() only when nothing is ready;
//  2. the WorkerPool (p-queue) end to end with a no-op handler;
//  3. one million pending addAfter items: heap used, time to schedule, and CPU
//     per tick, against a setTimeout per item feeding the same queue.
// Prints ratios. Run from the repository root after `npx tsc -b`:
//   scripts/with-node.sh node bench/workqueue/run.js
// Options (environment): KEYS, OPS, RUNS, POOL_OPS, PENDING (delayed items), WINDOW_MS.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { WorkQueue, WorkerPool } from "@tessera/workqueue";
import { summarize, writeResult } from "../lib/results.js";

const here = dirname(fileURLToPath(import.meta.url));
const KEYS = Number(process.env.KEYS ?? 10_000);
const OPS = Number(process.env.OPS ?? 1_000_000);
const RUNS = Number(process.env.RUNS ?? 5);
const POOL_OPS = Number(process.env.POOL_OPS ?? 200_000);
const PENDING = Number(process.env.PENDING ?? 1_000_000);
const WINDOW_MS = Number(process.env.WINDOW_MS ?? 8_000);

if (process.argv[2] === "--delay-child") {
  await delayChild(process.argv[3]);
  process.exit(0);
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function makeKeys(n) {
  return Array.from({ length: n }, (_, i) => `default/object-${i}`);
}

/** W async workers share one counter of cycles; each cycle is add(key), await get(), done(item). */
async function cycles(keys, ops, workers) {
  const queue = new WorkQueue({ name: "bench" });
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      // As in the Go program: the first worker past the end shuts the queue
      // down (closes it), which releases workers waiting in get().
      if (i >= ops) return queue.close();
      queue.add(keys[i % keys.length]);
      const item = await queue.get();
      if (item === undefined) return;
      queue.done(item);
    }
  };
  const start = performance.now();
  const startCpu = process.cpuUsage();
  await Promise.all(Array.from({ length: workers }, worker));
  const cpu = process.cpuUsage(startCpu);
  return { seconds: (performance.now() - start) / 1000, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
}

/** One worker that awaits only when nothing is ready: add(key), tryGet() ?? await get(), done(item). */
async function cyclesTryGet(keys, ops) {
  const queue = new WorkQueue({ name: "bench" });
  const start = performance.now();
  const startCpu = process.cpuUsage();
  for (let i = 0; i < ops; i++) {
    queue.add(keys[i % keys.length]);
    const item = queue.tryGet() ?? (await queue.get());
    queue.done(item);
  }
  const cpu = process.cpuUsage(startCpu);
  return { seconds: (performance.now() - start) / 1000, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
}

/** A producer adds OPS keys round-robin; the pool processes them with a no-op handler. */
async function pool(keys, ops, concurrency) {
  const queue = new WorkQueue({ name: "bench-pool" });
  let handled = 0;
  const workers = new WorkerPool({ queue, concurrency, handler: () => void handled++ });
  const stop = new AbortController();
  const running = workers.run(stop.signal);
  const start = performance.now();
  for (let i = 0; i < ops; i++) {
    queue.add(keys[i % keys.length]);
    if (i % 1_000 === 999) await new Promise((r) => setImmediate(r));
  }
  while (queue.len() > 0 || workers.inFlight > 0) await new Promise((r) => setImmediate(r));
  const seconds = (performance.now() - start) / 1000;
  stop.abort();
  await running;
  return { seconds, handled };
}

/** Runs in a child started with --expose-gc: one way of holding PENDING delayed items. */
async function delayChild(mode) {
  const keys = makeKeys(PENDING);
  // Deterministic delays, uniform in [2 s, 62 s).
  let seed = 42;
  const delays = new Float64Array(PENDING);
  for (let i = 0; i < PENDING; i++) {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    delays[i] = 2_000 + (seed / 2_147_483_648) * 60_000;
  }
  const queue = new WorkQueue({ name: "bench-delay" });
  globalThis.gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const rssBefore = process.memoryUsage().rss;
  const t0 = performance.now();
  const timers = mode === "timeout" ? new Array(PENDING) : undefined;
  if (mode === "buckets") {
    for (let i = 0; i < PENDING; i++) queue.addAfter(keys[i], delays[i]);
  } else {
    for (let i = 0; i < PENDING; i++) {
      const key = keys[i];
      timers[i] = setTimeout(() => queue.add(key), delays[i]);
    }
  }
  const scheduleMs = performance.now() - t0;
  globalThis.gc();
  const heapAfter = process.memoryUsage().heapUsed;
  const rssAfter = process.memoryUsage().rss;
  // Measure in steady state: from 15 s after scheduling began (the items due
  // then have delays of 10 s and more, in one-second buckets), and at least
  // 5 s after scheduling ended, so that neither side is still catching up on
  // items that fell due while it was scheduling.
  const settleMs = Math.max(15_000 - (performance.now() - t0), 5_000);
  await new Promise((r) => setTimeout(r, settleMs));
  const ticksBefore = queue.stats().delayTicks;
  const readyBefore = queue.len();
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  await new Promise((r) => setTimeout(r, WINDOW_MS));
  const cpu = process.cpuUsage(cpuBefore);
  const wallMs = performance.now() - wallBefore;
  const fired = queue.len() - readyBefore;
  const ticks = queue.stats().delayTicks - ticksBefore;
  const cpuMs = (cpu.user + cpu.system) / 1000;
  process.stdout.write(
    JSON.stringify({
      mode,
      pending: PENDING,
      heapBytesPerItem: (heapAfter - heapBefore) / PENDING,
      heapMiB: (heapAfter - heapBefore) / 2 ** 20,
      rssMiB: (rssAfter - rssBefore) / 2 ** 20,
      scheduleMs,
      windowMs: wallMs,
      fired,
      ticks,
      cpuMs,
      cpuMsPerSecond: cpuMs / (wallMs / 1000),
      cpuMsPerTick: ticks > 0 ? cpuMs / ticks : undefined,
      cpuMsPerThousandFired: fired > 0 ? (cpuMs / fired) * 1000 : undefined,
    }) + "\n",
  );
  if (timers) for (const t of timers) clearTimeout(t);
  queue.close();
}

function runDelayChild(mode) {
  const out = execFileSync(
    process.execPath,
    ["--expose-gc", fileURLToPath(import.meta.url), "--delay-child", mode],
    {
      env: process.env,
      encoding: "utf8",
      maxBuffer: 1 << 20,
    },
  );
  return JSON.parse(out.trim().split("\n").at(-1));
}

/** Runs the client-go program (building it first if needed): `runs` runs per worker count after a warm-up. */
function goBench(runs) {
  const dir = join(here, "go");
  const binary = join(dir, "workqueue-bench");
  if (!existsSync(binary)) {
    console.log("building the client-go benchmark (go build, modules from the Go module proxy) ...");
    execFileSync("go", ["mod", "tidy"], {
      cwd: dir,
      env: { ...process.env, GOFLAGS: "-mod=mod" },
      stdio: "inherit",
    });
    execFileSync("go", ["build", "-o", "workqueue-bench", "."], { cwd: dir, stdio: "inherit" });
  }
  const run = spawnSync(binary, [`-keys=${KEYS}`, `-ops=${OPS}`, `-runs=${runs}`, "-workers=1,8"], {
    encoding: "utf8",
  });
  if (run.status !== 0) throw new Error(`client-go benchmark failed: ${run.stderr}`);
  return run.stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
}

const fmt = (n, digits = 0) =>
  n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");
console.log(`load average at start: ${load()}`);
console.log(`node ${process.version}, ${KEYS} keys, ${OPS} cycles, median of ${RUNS} interleaved rounds`);
const keys = makeKeys(KEYS);
// Rounds alternate between the two implementations so that the noise of a
// shared machine falls on both alike. Besides the wall-clock rate, each side
// reports cycles per second of CPU time (all threads), which other load on the
// machine disturbs less.
const oursRuns = { 1: [], 8: [] };
const goRuns = { 1: [], 8: [] };
let goInfo;
for (const workers of [1, 8]) await cycles(keys, OPS / 10, workers); // warm-up
const tryGetRuns = [];
await cyclesTryGet(keys, OPS / 10); // warm-up
for (let r = 0; r < RUNS; r++) {
  for (const workers of [1, 8]) {
    const run = await cycles(keys, OPS, workers);
    oursRuns[workers].push({ wall: OPS / run.seconds, cpu: OPS / run.cpuSeconds });
  }
  const run = await cyclesTryGet(keys, OPS);
  tryGetRuns.push({ wall: OPS / run.seconds, cpu: OPS / run.cpuSeconds });
  for (const g of goBench(1)) {
    goRuns[g.workers].push({ wall: g.cyclesPerSecond, cpu: g.cyclesPerCpuSecond });
    goInfo = g;
  }
}
const rate = (runs, kind) => median(runs.map((x) => x[kind]));
for (const workers of [1, 8]) {
  const o = oursRuns[workers];
  const g = goRuns[workers];
  console.log(
    `${workers} worker(s): tessera ${fmt(rate(o, "wall"))} cycles/s (${fmt(rate(o, "cpu"))} per CPU-second), ` +
      `client-go ${fmt(rate(g, "wall"))} cycles/s (${fmt(rate(g, "cpu"))} per CPU-second)`,
  );
  console.log(
    `  ratio tessera / client-go: ${fmt(rate(o, "wall") / rate(g, "wall"), 2)} wall-clock, ` +
      `${fmt(rate(o, "cpu") / rate(g, "cpu"), 2)} per CPU-second`,
  );
}
console.log(
  `1 worker, tryGet() ?? await get(): tessera ${fmt(rate(tryGetRuns, "wall"))} cycles/s ` +
    `(${fmt(rate(tryGetRuns, "cpu"))} per CPU-second); ratio to client-go with 1 worker: ` +
    `${fmt(rate(tryGetRuns, "wall") / rate(goRuns[1], "wall"), 2)} wall-clock, ` +
    `${fmt(rate(tryGetRuns, "cpu") / rate(goRuns[1], "cpu"), 2)} per CPU-second`,
);
console.log(`  (client-go ${goInfo.goVersion}, GOMAXPROCS=${goInfo.gomaxprocs}; node is single-threaded)`);
const millions = (runs) => summarize(runs.map((x) => Number((x.wall / 1e6).toFixed(2))));
writeResult({
  name: "workqueue-cycles",
  title: `Work queue: add/get/done cycles, ${fmt(KEYS)} keys`,
  unit: "M cycles/s",
  lowerIsBetter: false,
  groups: [
    {
      label: "1 worker",
      bars: [
        { label: "tessera", ...millions(oursRuns[1]) },
        { label: "tessera, tryGet() ?? get()", ...millions(tryGetRuns) },
        { label: "client-go v0.37.2", ...millions(goRuns[1]) },
      ],
    },
    {
      label: "8 workers",
      bars: [
        { label: "tessera", ...millions(oursRuns[8]) },
        { label: "client-go v0.37.2", ...millions(goRuns[8]) },
      ],
    },
  ],
  note: `client-go built with ${goInfo.goVersion}, GOMAXPROCS=${goInfo.gomaxprocs}; node is single-threaded`,
});

for (const concurrency of [1, 8]) {
  await pool(keys, POOL_OPS / 10, concurrency); // warm-up
  const results = [];
  for (let r = 0; r < RUNS; r++) results.push(await pool(keys, POOL_OPS, concurrency));
  const m = median(results.map((x) => x.seconds));
  const handled = median(results.map((x) => x.handled));
  console.log(
    `tessera WorkerPool (p-queue), concurrency ${concurrency}, no-op handler, ${fmt(POOL_OPS)} adds: ` +
      `${fmt(handled / m)} handler calls/s (${fmt(handled)} calls after dedup)`,
  );
}

console.log(
  `\n${fmt(PENDING)} pending addAfter items, delays uniform in [2 s, 62 s), CPU over ${WINDOW_MS / 1000} s in steady state:`,
);
const buckets = runDelayChild("buckets");
const timeout = runDelayChild("timeout");
for (const r of [buckets, timeout]) {
  const label = r.mode === "buckets" ? "tessera buckets   " : "setTimeout per item";
  console.log(
    `${label}: heap ${fmt(r.heapMiB, 1)} MiB (${fmt(r.heapBytesPerItem)} B/item), rss +${fmt(r.rssMiB, 1)} MiB, ` +
      `schedule ${fmt(r.scheduleMs)} ms, fired ${fmt(r.fired)} in ${fmt(r.windowMs)} ms, CPU ${fmt(r.cpuMs)} ms ` +
      `(${fmt(r.cpuMsPerSecond, 1)} ms/s, ${fmt(r.cpuMsPerThousandFired ?? 0, 2)} ms per 1,000 fired)` +
      (r.ticks ? `, ${r.ticks} ticks, ${fmt(r.cpuMsPerTick, 2)} ms/tick` : ""),
  );
}
console.log(`ratio heap, setTimeout / buckets: ${fmt(timeout.heapMiB / buckets.heapMiB, 2)}`);
console.log(`ratio schedule time, setTimeout / buckets: ${fmt(timeout.scheduleMs / buckets.scheduleMs, 2)}`);
console.log(
  `ratio CPU per second of firing, setTimeout / buckets: ${fmt(timeout.cpuMsPerSecond / buckets.cpuMsPerSecond, 2)}`,
);
console.log(
  `ratio CPU per item fired, setTimeout / buckets: ${fmt(timeout.cpuMsPerThousandFired / buckets.cpuMsPerThousandFired, 2)}`,
);
console.log(`load average at end: ${load()}`);
