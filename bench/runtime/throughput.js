// End-to-end throughput of a controller: reconciles per second with a no-op
// reconciler while OBJECTS ConfigMaps (default 10,000) are created as fast as
// the API server takes them (64 creates in flight on keep-alive connections),
// and the lag from each create's response to its first reconcile (p50, p99),
// split where the replica reports it (Tessera's, one replica) at the moment
// the object's event reached the informer's handlers; on one replica and on
// three sharded replicas. Contenders: Tessera's
// runtime, controller-runtime (bench/runtime/go) and kube-rs's Controller
// (bench/peers/kube-rs), each built where its toolchain is on PATH. Each
// figure is the median of ROUNDS rounds (default 3), the contenders' order
// rotated each round.
//
// Run: bash scripts/with-node.sh node bench/runtime/throughput.js   (after npm run build; OBJECTS=2000 ROUNDS=1 for a short run;
//      ONLY="tessera;tessera, compact, reads" SCENARIOS=1 for some contenders and scenarios)
// Other contenders: --contender name=command (repeatable), where command
// starts one replica speaking the line protocol of tessera-replica.js.
// BENCH_CPU_PROF=dir writes a V8 CPU profile of each Node replica into dir
// (NODE_OPTIONS=--cpu-prof in the replicas' environment; the peers ignore it),
// sampled every 250 µs, written when the replica exits.
// SCENARIOS=race runs two contenders at once on the same creates instead (RACE="a;b", default
// "tessera;kube-rs"; both must be among ONLY's): per round and the median of rounds, each one's lag
// against the same create responses, when each event reached each client (Tessera's replica: the
// socket read, BENCH_ARRIVAL=1; kube-rs: its watcher's event), and whether each one's worst 1% waited
// on the server (both clients got those events late), in its event loop (Tessera's replica reports
// its stalls) or on its connection alone (only it got them late). E.g.
//   OBJECTS=10000 ROUNDS=6 SCENARIOS=race ONLY="tessera;kube-rs" bash scripts/with-node.sh node bench/runtime/throughput.js
// SCENARIOS=1,race runs both kinds.
import { spawn } from "node:child_process";
import { Agent, request } from "node:https";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { ControlPlane } from "@tessera/testenv";
import { buildCargo, controllerRuntimeReplica } from "../lib/contenders.js";
import { summarize, writeResult } from "../lib/results.js";

const OBJECTS = Number(process.env.OBJECTS ?? 10_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const IN_FLIGHT = 64;
const tesseraReplica = `${process.execPath} ${fileURLToPath(new URL("tessera-replica.js", import.meta.url))}`;
/** @type {[name: string, command: string, env?: Record<string, string>][]} [name, command, environment of its replicas] */
const contenders = [
  ["tessera", tesseraReplica],
  // The watch in JSON, as kube-rs and controller-runtime read ConfigMaps, instead of protobuf.
  ["tessera, json", tesseraReplica, { BENCH_WIRE: "json" }],
  // Each reconcile reads its object from the cache, which keeps it decoded, then compact.
  ["tessera, reads", tesseraReplica, { BENCH_READ: "1" }],
  ["tessera, compact, reads", tesseraReplica, { BENCH_READ: "1", BENCH_COMPACT: "1" }],
  // Each object's first reconcile patches it and reads it back, without and with read-your-writes.
  ["tessera, writes", tesseraReplica, { BENCH_WRITE: "1" }],
  ["tessera, writes, read-your-writes", tesseraReplica, { BENCH_WRITE: "1", BENCH_RYOW_MS: "2000" }],
];
// ONLY=name;name picks contenders (the peers are then built only when picked).
const only = process.env.ONLY?.split(";");
const wanted = (name) => !only || only.includes(name);
const controllerRuntime = wanted("controller-runtime v0.25.3") ? controllerRuntimeReplica() : undefined;
if (controllerRuntime) contenders.push(["controller-runtime v0.25.3", controllerRuntime]);
const kubeRs = wanted("kube-rs") ? buildCargo("kube-rs") : undefined;
if (kubeRs) contenders.push(["kube-rs", kubeRs("controller")]);
for (let i = 2; i < process.argv.length; i++) {
  if (process.argv[i] === "--contender") {
    const [name, ...command] = process.argv[++i].split("=");
    contenders.push([name, command.join("=")]);
  }
}
if (only) contenders.splice(0, contenders.length, ...contenders.filter(([name]) => wanted(name)));
// SCENARIOS=1 (or 3) picks the scenario by its replicas; SCENARIOS=race runs only the race (below).
const scenarios = [
  { label: "1 replica", mode: "every-replica", replicas: 1 },
  { label: "3 sharded replicas", mode: "sharded", replicas: 3 },
].filter((s) => !process.env.SCENARIOS || process.env.SCENARIOS.split(",").includes(String(s.replicas)));
const raceWanted = process.env.SCENARIOS?.split(",").includes("race") ?? false;
const now = () => Number(process.hrtime.bigint() / 1000n);

const cp = new ControlPlane();
await cp.start();
const kubeconfig = cp.writeKubeconfig();
const agent = new Agent({
  keepAlive: true,
  maxSockets: IN_FLIGHT,
  ca: cp.caPem,
  cert: cp.adminCredentials.certPem,
  key: cp.adminCredentials.keyPem,
});
const url = new URL(cp.apiserverUrl);

function post(path, body) {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: "POST",
        agent,
        headers: { "Content-Type": "application/json" },
      },
      (res) => {
        res.resume();
        res.on("end", () =>
          res.statusCode < 300
            ? resolve(undefined)
            : reject(new Error(`POST ${path}: HTTP ${res.statusCode}`)),
        );
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

const cpuProfile = process.env.BENCH_CPU_PROF
  ? {
      NODE_OPTIONS:
        `${process.env.NODE_OPTIONS ?? ""} --cpu-prof --cpu-prof-interval=250 --cpu-prof-dir=${process.env.BENCH_CPU_PROF}`.trim(),
    }
  : {};

function startReplica(command, env) {
  const [bin, ...args] = command.split(" ");
  const child = spawn(bin, args, {
    env: { ...process.env, ...cpuProfile, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const replica = {
    child,
    ready: false,
    first: new Map(),
    informed: new Map(),
    /** When each object's first event reached the client (see the race). */
    arrived: new Map(),
    /** @type {{ to: number, ms: number, cpuMs: number }[]} the event loop's stalls, where the replica reports them */
    loopStalls: [],
    /** @type {{ from: number, ms: number }[]} V8's GC pauses of 20 ms or more, where the replica reports them */
    gcPauses: [],
    total: 0,
    exitCode: undefined,
    exited: undefined,
  };
  createInterface({ input: child.stdout }).on("line", (text) => {
    let line;
    try {
      line = JSON.parse(text);
    } catch {
      return;
    }
    if (line.ev === "ready") replica.ready = true;
    else if (line.ev === "r" && !replica.first.has(line.n)) {
      replica.first.set(line.n, line.t);
      if (line.i !== undefined) replica.informed.set(line.n, line.i);
      if (line.w !== undefined) replica.arrived.set(line.n, line.w);
    } else if (line.ev === "count") replica.total = line.total;
    else if (line.ev === "late") replica.loopStalls.push({ to: line.t, ms: line.ms, cpuMs: line.cpu });
    else if (line.ev === "gc") replica.gcPauses.push({ from: line.t, ms: line.ms });
  });
  replica.exited = new Promise((resolve) =>
    child.on("exit", (code) => {
      replica.exitCode = code;
      resolve(code);
    }),
  );
  return replica;
}

async function until(what, done, limitMs) {
  const deadline = Date.now() + limitMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
/** @type {Map<string, any[]>} contender + scenario -> one result per round */
const results = new Map();
const unsupported = new Set();
/** @type {Map<string, string[]>} contender + scenario -> why its failed rounds failed */
const failures = new Map();
let run = 0;
for (let round = 0; round < ROUNDS && scenarios.length > 0; round++) {
  // Each round starts one contender later, so that none always runs first.
  const order = contenders.map((_, i) => contenders[(i + round) % contenders.length]);
  for (const [contender, command, extraEnv] of order) {
    for (const scenario of scenarios) {
      const key = `${contender}\u0000${scenario.label}`;
      if (unsupported.has(key)) continue;
      const result = await measure(contender, command, scenario, extraEnv);
      if (result === undefined) {
        unsupported.add(key);
        continue;
      }
      console.log(`round ${round + 1} ${contender}, ${scenario.label}: ${JSON.stringify(result)}`);
      if ("failed" in result) {
        failures.set(key, [...(failures.get(key) ?? []), result.failed]);
        continue;
      }
      results.set(key, [...(results.get(key) ?? []), result]);
    }
  }
}

/**
 * Creates OBJECTS ConfigMaps (`cm-<n>`) in `namespace`, IN_FLIGHT at a time.
 * @returns {Promise<{ written: Map<string, number>, t0: number, writesDone: number }>} each create's response time (µs)
 */
async function createAll(namespace) {
  const written = new Map();
  const t0 = now();
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < OBJECTS) {
        const name = `cm-${next++}`;
        await post(`/api/v1/namespaces/${namespace}/configmaps`, {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name, namespace },
          data: { n: name },
        });
        written.set(name, now());
      }
    }),
  );
  return { written, t0, writesDone: now() };
}

/** One contender in one scenario, once: undefined when the contender has no such mode. */
async function measure(contender, command, scenario, extraEnv = {}) {
  const namespace = `bench-${++run}`;
  await post("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
  const replicas = Array.from({ length: scenario.replicas }, (_, i) =>
    startReplica(command, {
      ...extraEnv,
      KUBECONFIG: kubeconfig,
      BENCH_NAMESPACE: namespace,
      BENCH_MODE: scenario.mode,
      BENCH_IDENTITY: `${contender}-${run}-${i}`.replace(/[^a-z0-9-]/gi, "-").toLowerCase(),
    }),
  );
  await until("replicas ready", () => replicas.every((r) => r.ready || r.exitCode !== undefined), 120_000);
  if (replicas.some((r) => r.exitCode === 3)) {
    // The contender has no such mode (controller-runtime has no sharding).
    for (const r of replicas) r.child.kill("SIGTERM");
    await Promise.all(replicas.map((r) => r.exited));
    return undefined;
  }
  if (!replicas.every((r) => r.ready)) throw new Error(`${contender}: a replica exited before ready`);
  if (scenario.mode === "sharded") await new Promise((r) => setTimeout(r, 3000)); // let the ring settle
  const { written, t0, writesDone } = await createAll(namespace);
  const seen = () => replicas.reduce((n, r) => n + r.first.size, 0);
  try {
    await until(
      `${contender} ${scenario.label}: all ${OBJECTS} reconciled`,
      () => seen() >= OBJECTS,
      600_000,
    );
  } catch (err) {
    // A round that never finishes is a result too (it was seen: every sharded member fenced under load).
    for (const r of replicas) r.child.kill("SIGTERM");
    await Promise.all(replicas.map((r) => r.exited));
    return { failed: `${String(err.message)}: ${seen()} of ${OBJECTS} reconciled` };
  }
  const lags = [];
  let last = 0;
  for (const r of replicas)
    for (const [name, t] of r.first) {
      lags.push((t - written.get(name)) / 1000);
      last = Math.max(last, t);
    }
  lags.sort((a, b) => a - b);
  // The lag split where the replica says when each object reached its informer's handlers.
  const toInformer = [];
  const fromInformer = [];
  for (const r of replicas)
    for (const [name, i] of r.informed) {
      toInformer.push((i - written.get(name)) / 1000);
      fromInformer.push((r.first.get(name) - i) / 1000);
    }
  toInformer.sort((a, b) => a - b);
  fromInformer.sort((a, b) => a - b);
  const split =
    toInformer.length > 0
      ? {
          toInformerP99: Number(quantile(toInformer, 0.99).toFixed(1)),
          informerToReconcileP99: Number(quantile(fromInformer, 0.99).toFixed(1)),
        }
      : {};
  for (const r of replicas) r.child.kill("SIGTERM");
  await Promise.all(replicas.map((r) => r.exited));
  return {
    writesPerSec: Math.round(OBJECTS / ((writesDone - t0) / 1e6)),
    reconcilesPerSec: Math.round(OBJECTS / ((last - t0) / 1e6)),
    lagP50: Number(quantile(lags, 0.5).toFixed(1)),
    lagP99: Number(quantile(lags, 0.99).toFixed(1)),
    lagMax: Number(lags[lags.length - 1].toFixed(1)),
    ...split,
  };
}
// The race (SCENARIOS=race): the replicas of two contenders (RACE="a;b", default "tessera;kube-rs")
// run at once, each its own process, on the same creates, and each one's lag is taken against the
// same create responses, so the machine's state in a round is the same for both. Each is started
// and synced before the next starts, and both before the creates; the order alternates by round.
// Each replica also says when each object's first event reached it ("w": Tessera's replica, with
// BENCH_ARRIVAL=1, when the bytes holding it were read from the socket; kube-rs's, when its watcher
// yielded it), which places a stall: on the server when both saw the event late, in a client when
// only one did.
const raceRounds = [];
const raceNames = (process.env.RACE ?? "tessera;kube-rs").split(";");
if (raceWanted) {
  if (raceNames.length !== 2)
    throw new Error(`RACE names ${raceNames.length} contenders; name two, as "tessera;kube-rs"`);
  const racers = raceNames.map((name) => {
    const found = contenders.find(([n]) => n === name);
    if (!found)
      throw new Error(
        `RACE names "${name}", which is not a contender of this run; name two of: ${contenders.map(([n]) => n).join(", ")} (ONLY picks which are built)`,
      );
    return found;
  });
  for (let round = 0; round < ROUNDS; round++) {
    const order = racers.map((_, i) => racers[(i + round) % racers.length]);
    const result = await race(order);
    raceRounds.push(result);
    printRaceRound(round + 1, result);
  }
}

/** One round of the race, the contenders started in `order`. */
async function race(order) {
  const namespace = `bench-${++run}`;
  await post("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
  const replicas = [];
  const stopAll = async () => {
    for (const r of replicas) r.child.kill("SIGTERM");
    await Promise.all(replicas.map((r) => r.exited));
  };
  for (const [contender, command, extraEnv] of order) {
    const replica = startReplica(command, {
      ...extraEnv,
      BENCH_ARRIVAL: "1",
      KUBECONFIG: kubeconfig,
      BENCH_NAMESPACE: namespace,
      BENCH_MODE: "every-replica",
      BENCH_IDENTITY: `${contender}-${run}`.replace(/[^a-z0-9-]/gi, "-").toLowerCase(),
    });
    replicas.push(Object.assign(replica, { contender }));
    await until(`${contender} ready`, () => replica.ready || replica.exitCode !== undefined, 120_000);
    if (!replica.ready) {
      await stopAll();
      throw new Error(`${contender}: its replica exited (${replica.exitCode}) before ready`);
    }
  }
  const started = new Date().toISOString();
  const { written, t0, writesDone } = await createAll(namespace);
  try {
    await until("all reconciled by both", () => replicas.every((r) => r.first.size >= OBJECTS), 600_000);
  } catch (err) {
    await stopAll();
    return {
      started,
      order: order.map(([n]) => n),
      failed: `${String(err.message)}: ${replicas.map((r) => `${r.contender} ${r.first.size}`).join(", ")} of ${OBJECTS}`,
    };
  }
  await stopAll();
  const ms = (µs) => Number((µs / 1000).toFixed(1));
  const byContender = {};
  for (const r of replicas) {
    const other = replicas.find((x) => x !== r);
    const lagOf = (name) => r.first.get(name) - written.get(name);
    const names = [...written.keys()];
    const lags = names.map(lagOf).sort((a, b) => a - b);
    const arrivals = names
      .filter((n) => r.arrived.has(n))
      .map((n) => r.arrived.get(n) - written.get(n))
      .sort((a, b) => a - b);
    // How much later than the other client this one got each event (negative: sooner).
    const behind = names
      .filter((n) => r.arrived.has(n) && other?.arrived.has(n))
      .map((n) => r.arrived.get(n) - other.arrived.get(n))
      .sort((a, b) => a - b);
    // The objects of this contender's worst 1% of lag: where was each when it was late?
    const worst = [...names].sort((a, b) => lagOf(b) - lagOf(a)).slice(0, Math.ceil(names.length / 100));
    const median = (values) =>
      values.length ? [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)] : NaN;
    const worstOwnArrival = median(
      worst.filter((n) => r.arrived.has(n)).map((n) => r.arrived.get(n) - written.get(n)),
    );
    const worstOtherArrival = median(
      worst.filter((n) => other?.arrived.has(n)).map((n) => other.arrived.get(n) - written.get(n)),
    );
    const worstOtherLag = median(worst.map((n) => other.first.get(n) - written.get(n)));
    // The longest time the client received nothing while creates were answered.
    const times = [...r.arrived.values()].sort((a, b) => a - b);
    let gap = { from: t0, length: 0 };
    for (let i = 1; i < times.length; i++) {
      if (times[i - 1] > writesDone) break;
      const length = times[i] - Math.max(times[i - 1], t0);
      if (length > gap.length) gap = { from: Math.max(times[i - 1], t0), length };
    }
    const inGap = (t) => t > gap.from && t < gap.from + gap.length;
    // The event loop's stalls in the creates' window (Tessera's replica reports them), and how many of
    // the worst 1% waited for their arrival across one.
    const stalls = r.loopStalls.filter((s) => s.to > t0 && s.to - s.ms * 1000 < writesDone);
    const longestStall = stalls.reduce((a, b) => (b.ms > a.ms ? b : a), { to: t0, ms: 0, cpuMs: 0 });
    const stallFrom = longestStall.to - (longestStall.ms + 10) * 1000;
    const gcInLongestStall = r.gcPauses
      .map((g) => Math.min(longestStall.to, g.from + g.ms * 1000) - Math.max(stallFrom, g.from))
      .filter((overlap) => overlap > 0)
      .reduce((sum, overlap) => sum + overlap, 0);
    const worstInStall = worst.filter((n) => {
      const from = written.get(n);
      const to = r.arrived.get(n) ?? r.first.get(n);
      return stalls.some((s) => s.to - (s.ms + 10) * 1000 < to && s.to > from);
    }).length;
    byContender[r.contender] = {
      lagP50: ms(quantile(lags, 0.5)),
      lagP99: ms(quantile(lags, 0.99)),
      lagMax: ms(lags[lags.length - 1]),
      arrivedOf: arrivals.length,
      arrivalP50: arrivals.length ? ms(quantile(arrivals, 0.5)) : undefined,
      arrivalP99: arrivals.length ? ms(quantile(arrivals, 0.99)) : undefined,
      behindOther: behind.length
        ? {
            p50: ms(quantile(behind, 0.5)),
            p99: ms(quantile(behind, 0.99)),
            max: ms(behind[behind.length - 1]),
          }
        : undefined,
      worst1pct: {
        ownArrival: ms(worstOwnArrival),
        otherArrival: ms(worstOtherArrival),
        otherLag: ms(worstOtherLag),
      },
      loopStalls: r.contender.startsWith("tessera")
        ? {
            count: stalls.length,
            longestMs: longestStall.ms,
            longestCpuMs: longestStall.cpuMs,
            longestGcMs: ms(gcInLongestStall),
            atMs: ms(longestStall.to - longestStall.ms * 1000 - t0),
            worstInStall,
          }
        : undefined,
      longestGap: {
        fromMs: ms(gap.from - t0),
        ms: ms(gap.length),
        createsAnswered: [...written.values()].filter(inGap).length,
        otherReceived: other ? [...other.arrived.values()].filter(inGap).length : undefined,
      },
    };
  }
  return {
    started,
    order: order.map(([n]) => n),
    writesPerSec: Math.round(OBJECTS / ((writesDone - t0) / 1e6)),
    contenders: byContender,
  };
}

/**
 * Where a contender's worst 1% waited: on the server when the other client received those events as
 * late; in this client's event loop when it stalled across most of their waits (Tessera's replica
 * reports its stalls); else on this connection alone (server to socket, or a client that cannot say).
 */
function placeStall(c) {
  const { ownArrival, otherArrival } = c.worst1pct;
  if (!Number.isFinite(ownArrival) || !Number.isFinite(otherArrival)) return "unplaced (no arrival times)";
  if (ownArrival < 50) return "after arrival";
  if (otherArrival >= ownArrival / 2) return "server (both late)";
  if (c.loopStalls && c.loopStalls.worstInStall * 2 >= Math.ceil(OBJECTS / 100))
    return "this client's event loop";
  return "this connection only";
}

function printRaceRound(round, result) {
  if (result.failed) {
    console.log(`race round ${round} (${result.order.join(" then ")}) failed: ${result.failed}`);
    return;
  }
  console.log(
    `race round ${round} at ${result.started}, started ${result.order.join(" then ")}, ${result.writesPerSec} creates/s:`,
  );
  for (const [name, c] of Object.entries(result.contenders))
    console.log(
      `  ${name}: lag p50 ${c.lagP50} p99 ${c.lagP99} max ${c.lagMax} ms; arrival p50 ${c.arrivalP50} p99 ${c.arrivalP99} ms (${c.arrivedOf} timed); after the other client's arrival: p50 ${c.behindOther?.p50} p99 ${c.behindOther?.p99} max ${c.behindOther?.max} ms; worst 1%: own arrival ${c.worst1pct.ownArrival}, other's arrival ${c.worst1pct.otherArrival}, other's lag ${c.worst1pct.otherLag} ms -> ${placeStall(c)}; longest gap ${c.longestGap.ms} ms at +${c.longestGap.fromMs} ms (${c.longestGap.createsAnswered} creates answered, other received ${c.longestGap.otherReceived})${c.loopStalls ? `; event loop stalls >= 50 ms: ${c.loopStalls.count}, longest ${c.loopStalls.longestMs} ms at +${c.loopStalls.atMs} ms (${c.loopStalls.longestCpuMs} ms CPU, ${c.loopStalls.longestGcMs} ms GC), worst 1% across one: ${c.loopStalls.worstInStall}` : ""}`,
    );
}

const rows = [];
for (const [contender] of contenders)
  for (const scenario of scenarios) {
    const key = `${contender}\u0000${scenario.label}`;
    if (unsupported.has(key)) rows.push({ contender, scenario: scenario.label, unsupported: true });
    else if (!results.has(key)) rows.push({ contender, scenario: scenario.label, failed: failures.get(key) });
    else {
      const all = results.get(key);
      const pick = (f) => summarize(all.map(f));
      // Only Tessera's replica reports when each event reached the informer.
      const split = all.every((x) => x.toInformerP99 !== undefined);
      rows.push({
        contender,
        scenario: scenario.label,
        writesPerSec: pick((x) => x.writesPerSec),
        reconcilesPerSec: pick((x) => x.reconcilesPerSec),
        lagP50: pick((x) => x.lagP50),
        lagP99: pick((x) => x.lagP99),
        lagMax: pick((x) => x.lagMax),
        toInformerP99: split ? pick((x) => x.toInformerP99) : undefined,
        informerToReconcileP99: split ? pick((x) => x.informerToReconcileP99) : undefined,
      });
    }
  }
await cp.stop();
agent.destroy();
if (scenarios.length > 0) {
  console.log(
    `\n${OBJECTS} ConfigMaps created with ${IN_FLIGHT} in flight; no-op reconciler; lag = create response -> first reconcile; median of ${ROUNDS} rounds`,
  );
  console.log(
    "| contender | scenario | creates/s | reconciles/s (min-max) | x best peer | lag p50 | lag p99 (min-max) | lag max | p99: create -> informer, informer -> reconcile |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|");
  for (const r of rows) {
    if (r.unsupported || r.failed) {
      console.log(
        `| ${r.contender} | ${r.scenario} | ${r.unsupported ? "not supported" : `every round failed: ${r.failed?.[0]}`} | | | | | | |`,
      );
      continue;
    }
    const failedRounds = failures.get(`${r.contender}\u0000${r.scenario}`)?.length ?? 0;
    if (failedRounds)
      console.log(
        `(${r.contender}, ${r.scenario}: ${failedRounds} round(s) failed: ${failures.get(`${r.contender}\u0000${r.scenario}`)?.[0]})`,
      );
    const peers = rows.filter(
      (x) => x.scenario === r.scenario && !x.unsupported && !x.failed && !x.contender.startsWith("tessera"),
    );
    const best = peers.sort((a, b) => b.reconcilesPerSec.median - a.reconcilesPerSec.median)[0];
    console.log(
      `| ${r.contender} | ${r.scenario} | ${r.writesPerSec.median} | ${r.reconcilesPerSec.median} (${r.reconcilesPerSec.min}-${r.reconcilesPerSec.max}) | ${best ? (r.reconcilesPerSec.median / best.reconcilesPerSec.median).toFixed(2) : "n/a"} | ${r.lagP50.median} ms | ${r.lagP99.median} ms (${r.lagP99.min}-${r.lagP99.max}) | ${r.lagMax.median} ms | ${r.toInformerP99 ? `${r.toInformerP99.median} ms, ${r.informerToReconcileP99.median} ms` : ""} |`,
    );
  }

  const scenarioLabels = [...new Set(rows.map((r) => r.scenario))];
  const supported = (r) => !r.unsupported && !r.failed;
  const bar = (label, s) => ({ label, median: s.median, min: s.min, max: s.max, runs: s.runs });
  writeResult({
    name: "runtime-throughput",
    title: `End to end: ${OBJECTS.toLocaleString("en-US")} ConfigMaps created, no-op reconcile`,
    unit: "reconciles/s",
    lowerIsBetter: false,
    groups: scenarioLabels.map((scenario) => ({
      label: scenario,
      bars: rows
        .filter((r) => r.scenario === scenario && supported(r))
        .map((r) => bar(r.contender, r.reconcilesPerSec)),
    })),
    note: `median of ${ROUNDS} rounds, whiskers min to max`,
    rows,
  });
  writeResult({
    name: "runtime-lag",
    title: "End to end: create response to first reconcile, p99",
    unit: "ms",
    lowerIsBetter: true,
    groups: scenarioLabels.map((scenario) => ({
      label: scenario,
      bars: rows
        .filter((r) => r.scenario === scenario && supported(r))
        .map((r) => bar(r.contender, r.lagP99)),
    })),
    note: `p99 per round; median of ${ROUNDS} rounds, whiskers min to max`,
    rows,
  });
}

if (raceRounds.length > 0) {
  const done = raceRounds.filter((r) => !r.failed);
  console.log(
    `\nRace: ${raceNames.join(" and ")} at once on the same ${OBJECTS} creates (${IN_FLIGHT} in flight), no-op reconciler, lag = create response -> first reconcile`,
  );
  console.log(
    `| round | started (UTC) | first started | creates/s | ${raceNames.map((n) => `${n} p50 / p99 / max`).join(" | ")} | ${raceNames.map((n) => `${n} arrival p99; worst 1% placed`).join(" | ")} |`,
  );
  console.log(
    `|---|---|---|---:|${raceNames.map(() => "---:|").join("")}${raceNames.map(() => "---|").join("")}`,
  );
  raceRounds.forEach((r, i) => {
    if (r.failed) return console.log(`| ${i + 1} | ${r.started} | ${r.order[0]} | failed: ${r.failed} |`);
    const c = (n) => r.contenders[n];
    console.log(
      `| ${i + 1} | ${r.started.slice(11, 19)} | ${r.order[0]} | ${r.writesPerSec} | ${raceNames.map((n) => `${c(n).lagP50} / ${c(n).lagP99} / ${c(n).lagMax} ms`).join(" | ")} | ${raceNames.map((n) => `${c(n).arrivalP99} ms; ${placeStall(c(n))}`).join(" | ")} |`,
    );
  });
  if (done.length > 0) {
    const pick = (n, f) => summarize(done.map((r) => f(r.contenders[n])));
    console.log(
      `| median of ${done.length} | | | ${summarize(done.map((r) => r.writesPerSec)).median} | ${raceNames.map((n) => `${pick(n, (c) => c.lagP50).median} / ${pick(n, (c) => c.lagP99).median} / ${pick(n, (c) => c.lagMax).median} ms`).join(" | ")} | ${raceNames.map((n) => `${pick(n, (c) => c.arrivalP99 ?? NaN).median} ms`).join(" | ")} |`,
    );
  }
  writeResult({
    name: "runtime-race",
    title: `End to end, at once: ${raceNames.join(" and ")} on the same ${OBJECTS.toLocaleString("en-US")} creates, p99 lag`,
    unit: "ms",
    lowerIsBetter: true,
    groups: [
      {
        label: "race",
        bars: raceNames.map((n) => {
          const p99 = summarize(done.map((r) => r.contenders[n].lagP99));
          return { label: n, median: p99.median, min: p99.min, max: p99.max, runs: p99.runs };
        }),
      },
    ],
    note: `p99 per round; median of ${done.length} rounds, whiskers min to max`,
    rows: raceRounds,
  });
}
