// The main job (scripts/demo.sh runs it after a build): the sharded-tenants
// example operator, scaled across replicas while its Tenants change, against
// a real kube-apiserver and etcd. Each replica is its own process; the shard
// ring is drawn live; at the end a fresh LIST must show every Tenant
// reconciled at its last generation, or the demo exits 1.
//
//   node scripts/demo.mjs [--objects 1000] [--replicas 3,5,2] [--keep]
//
// --replicas: the replica counts to step through (a removal of several stops
// one with SIGKILL and the others with SIGTERM); --keep: leave the control
// plane and the replicas running and print the kubeconfig.
import { mkdtempSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { readRings, renderRing } from "@tessera/cli";
import { ApiClient } from "@tessera/runtime";
import { ControlPlane, FaultProxy, parsePrometheusText } from "@tessera/testenv";
import { Replicas } from "../soak/replicas.mjs";

const { values } = parseArgs({
  options: {
    objects: { type: "string", default: "1000" },
    replicas: { type: "string", default: "3,5,2" },
    keep: { type: "boolean", default: false },
  },
});
const OBJECTS = Number(values.objects);
const STEPS = values.replicas.split(",").map(Number);
if (!Number.isInteger(OBJECTS) || OBJECTS < 1 || STEPS.some((n) => !Number.isInteger(n) || n < 1)) {
  console.error("demo: --objects takes a whole number >= 1, --replicas a list such as 3,5,2");
  process.exit(2);
}
const example = fileURLToPath(new URL("../examples/sharded-tenants/", import.meta.url));
const OPERATOR = join(example, "dist/src/main.js");
const GROUP = "tenancy.example.com";
const TENANTS = `/apis/${GROUP}/v1alpha1`;
const RESOURCE = `tenants.${GROUP}`;
const tty = process.stdout.isTTY === true;
const work = mkdtempSync(join(tmpdir(), "tessera-demo-"));
const started = Date.now();
const say = (line) => console.log(`demo: ${line}`);
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

const cp = new ControlPlane({ crds: [join(example, "deploy/base/crds")] });
let unsharded;
let failed = false;
let stopping = false;
const replicas = new Replicas({
  cp,
  work,
  // Short Leases, so that a SIGKILLed replica's slots move within seconds.
  env: {
    // Info: its "metrics: listening" line says which port it got.
    TESSERA_LOG_LEVEL: "info",
    TESSERA_LEADER_ELECTION_LEASE_DURATION_MS: "3000",
    TESSERA_LEADER_ELECTION_RENEW_DEADLINE_MS: "2000",
    TESSERA_LEADER_ELECTION_RETRY_PERIOD_MS: "500",
  },
  // A replica that exits by itself with code 1 (its ring member fenced itself, or it lost its
  // leadership) asks to be restarted: a Deployment would, so the demo does.
  onExit: (replica, code) => {
    if (code !== 1 || replica.stopping || stopping) return;
    say(
      `${replica.name} exited with code 1 (see ${join(work, `${replica.name}.log`)}); starting a replacement, as a Deployment would`,
    );
    void startReplica().then((replacement) => {
      if (stopping) void replicas.stop(replacement, "SIGTERM");
    });
  },
});

async function startReplica() {
  const replica = await replicas.start("replica", OPERATOR);
  replica.last = { reconciles: 0, events: 0 };
  return replica;
}

/** What a replica's /metrics says: reconciles done, Tenant watch events received. */
async function scrape(replica) {
  if (replica.gone || replica.stopping) return replica.last;
  try {
    const res = await fetch(`http://127.0.0.1:${replica.metricsPort}/metrics`, {
      signal: AbortSignal.timeout(1000),
    });
    const families = parsePrometheusText(await res.text());
    const sum = (sample, match) => {
      let total = 0;
      for (const family of families.values())
        for (const s of family.samples) if (s.name === sample && match(s.labels)) total += s.value;
      return total;
    };
    replica.last = {
      reconciles: sum("controller_runtime_reconcile_total", (l) => l.result !== "error"),
      events: sum("tessera_reflector_events_total", (l) => l.resource === RESOURCE),
    };
  } catch {
    // not listening yet, or gone
  }
  return replica.last;
}

async function call(method, path, body, contentType = "application/json") {
  const res = await cp.raw(path, {
    method,
    headers: { "content-type": contentType },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: HTTP ${res.status}: ${res.body.slice(0, 300)}`);
  return JSON.parse(res.body);
}

/** Tenants whose status says reconciled at their current generation, by a fresh LIST. */
async function reconciledCount() {
  const list = await call("GET", `${TENANTS}/namespaces/default/tenants`);
  return list.items.filter(
    (t) =>
      t.status?.observedGeneration === t.metadata.generation &&
      t.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
  ).length;
}

/** An unsharded watch of every Tenant event, through its own proxy: the stream one replica would get without sharding. */
async function watchUnsharded() {
  const proxy = new FaultProxy(cp.apiserverPort);
  await proxy.start();
  const state = { proxy, events: 0, stop: () => {} };
  const { certPem, keyPem } = cp.adminCredentials;
  const req = request(
    {
      host: "127.0.0.1",
      port: Number(new URL(proxy.url).port),
      path: `${TENANTS}/tenants?watch=true`,
      ca: cp.caPem,
      cert: certPem,
      key: keyPem,
      servername: "localhost",
    },
    (res) => {
      let buffered = "";
      res.on("data", (chunk) => {
        buffered += chunk.toString();
        const lines = buffered.split("\n");
        buffered = lines.pop();
        state.events += lines.filter((l) => l.trim()).length;
      });
      res.on("error", () => {});
    },
  );
  req.on("error", () => {});
  req.end();
  state.stop = () => req.destroy();
  return state;
}

const client = () => new ApiClient(cp.kubeConfig, { fieldManager: "demo" });

/** The published assignment's owners, or undefined before there is one. */
async function owners() {
  const [ring] = await readRings(client(), "default");
  return ring;
}

let stepLabel = "";
async function draw() {
  const ring = await owners().catch(() => undefined);
  const done = await reconciledCount().catch(() => 0);
  const live = replicas.live();
  const stats = await Promise.all(live.map(scrape));
  const lines = [
    `${stepLabel}  (${seconds(Date.now() - started)})`,
    `reconciled at their last generation: ${done}/${OBJECTS}`,
    `reconciles so far: ${live.map((r, i) => `${r.name} ${stats[i].reconciles}`).join(", ")}`,
    "",
    ring ? renderRing(ring, { color: tty, width: 48 }).trimEnd() : "(no assignment published yet)",
  ];
  if (tty) process.stdout.write(`\x1b[H\x1b[2J${lines.join("\n")}\n`);
  return { ring, done };
}

/** Waits until the ring is settled among the live replicas and every Tenant is reconciled at its last generation. */
async function converge(what, since) {
  let lastPrint = 0;
  for (;;) {
    const { ring, done } = await draw();
    const live = new Set(replicas.live().map((r) => r.name));
    const settled =
      ring &&
      ring.assignment.releasing.size === 0 &&
      ring.assignment.owners.every((o) => o !== undefined && live.has(o)) &&
      ring.members
        .filter((m) => live.has(m.identity))
        .every((m) => m.acknowledgedEpoch === ring.assignment.epoch);
    if (settled && done === OBJECTS) return { ms: Date.now() - since, ring };
    if (!tty && Date.now() - lastPrint > 3000) {
      say(`${what}: ${done}/${OBJECTS} reconciled, ring ${settled ? "settled" : "moving"}`);
      lastPrint = Date.now();
    }
    if (Date.now() - since > 120_000)
      throw new Error(`${what}: not converged after 120 s (${done}/${OBJECTS} reconciled)`);
    await new Promise((r) => setTimeout(r, tty ? 400 : 250));
  }
}

async function touchAll(round) {
  const names = Array.from({ length: OBJECTS }, (_, i) => `tenant-${i}`);
  const tiers = ["free", "team", "enterprise"];
  for (let i = 0; i < names.length; i += 50) {
    await Promise.all(
      names
        .slice(i, i + 50)
        .map((name) =>
          call(
            "PATCH",
            `${TENANTS}/namespaces/default/tenants/${name}`,
            { spec: { tier: tiers[round % 3] } },
            "application/merge-patch+json",
          ),
        ),
    );
  }
}

const movedFraction = (before, after) =>
  before.assignment.owners.filter((o, i) => o !== after.assignment.owners[i]).length /
  before.assignment.owners.length;

const summary = [];
try {
  say(`starting etcd and kube-apiserver, with the Tenant CRD of examples/sharded-tenants`);
  await cp.start();
  unsharded = await watchUnsharded();
  stepLabel = `step 1: ${STEPS[0]} replicas`;
  for (let i = 0; i < STEPS[0]; i++) await startReplica();
  say(`${STEPS[0]} replicas started (separate processes, sharded mode); creating ${OBJECTS} Tenants`);
  const created = Date.now();
  for (let i = 0; i < OBJECTS; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, OBJECTS - i) }, (_, j) =>
        call("POST", `${TENANTS}/namespaces/default/tenants`, {
          apiVersion: `${GROUP}/v1alpha1`,
          kind: "Tenant",
          metadata: { name: `tenant-${i + j}` },
          spec: { displayName: `Tenant ${i + j}`, owners: ["demo"] },
        }),
      ),
    );
  }
  let { ms, ring } = await converge(`${OBJECTS} Tenants with ${STEPS[0]} replicas`, created);
  summary.push({ step: `start with ${STEPS[0]}`, moved: undefined, ideal: undefined, ms });

  for (let s = 1; s < STEPS.length; s++) {
    const from = replicas.live().length;
    const to = STEPS[s];
    const before = ring;
    const at = Date.now();
    const how = [];
    if (to > from) {
      for (let i = from; i < to; i++) await startReplica();
      how.push(`${to - from} started`);
    } else if (to < from) {
      const leaving = replicas.live().slice(0, from - to);
      leaving.forEach((r, i) => {
        const signal = i === 0 ? "SIGKILL" : "SIGTERM";
        void replicas.stop(r, signal);
        how.push(`${r.name} ${signal}`);
      });
    }
    stepLabel = `step ${s + 1}: ${from} -> ${to} replicas (${how.join(", ")}); every Tenant changes`;
    say(stepLabel);
    await touchAll(s);
    ({ ms, ring } = await converge(`${from} -> ${to}`, at));
    summary.push({
      step: `${from} -> ${to} (${how.join(", ")})`,
      moved: movedFraction(before, ring),
      ideal: Math.abs(to - from) / Math.max(to, from),
      ms,
    });
  }

  // The independent check: a fresh LIST, every status at its last generation.
  const done = await reconciledCount();
  const all = await Promise.all(replicas.all.map(scrape));
  console.log("");
  console.log("summary");
  console.log(`  Tenants: ${OBJECTS}; reconciled at their last generation (fresh LIST): ${done}/${OBJECTS}`);
  console.log(
    `  reconciles per replica: ${replicas.all.map((r, i) => `${r.name} ${all[i].reconciles}${r.gone || r.stopping ? " (stopped)" : ""}`).join(", ")}`,
  );
  for (const row of summary) {
    const moved =
      row.moved === undefined
        ? ""
        : `, slots moved ${(row.moved * 100).toFixed(1)}% (ideal ${(row.ideal * 100).toFixed(1)}%)`;
    console.log(`  ${row.step}: converged in ${seconds(row.ms)}${moved}`);
  }
  console.log(
    `  Tenant watch events per replica: ${replicas.all.map((r, i) => `${r.name} ${all[i].events}`).join(", ")}; ` +
      `one unsharded watch of all Tenants: ${unsharded.events}`,
  );
  console.log(
    `  API bytes received per replica (all its watches and lists): ${replicas.all
      .map((r) => `${r.name} ${(r.proxy.stats.bytesDown / 1e6).toFixed(1)} MB`)
      .join(", ")}; the unsharded Tenant watch: ${(unsharded.proxy.stats.bytesDown / 1e6).toFixed(1)} MB`,
  );
  console.log(`  wall time ${seconds(Date.now() - started)}`);
  if (done !== OBJECTS) {
    failed = true;
    console.log(`demo: FAILED: ${OBJECTS - done} Tenants are not reconciled at their last generation`);
  } else {
    console.log("demo: every Tenant reconciled at its last generation");
  }
  if (values.keep) {
    console.log(
      `demo: --keep: still running; kubectl --kubeconfig ${cp.writeKubeconfig(join(work, "kubeconfig"))} get tenants`,
    );
    console.log("demo: press Ctrl-C to stop");
    await new Promise((resolve) => process.once("SIGINT", resolve));
  }
} catch (err) {
  failed = true;
  console.error(`demo: FAILED: ${err.message}; replica logs in ${work}`);
} finally {
  stopping = true;
  unsharded?.stop();
  await replicas.stopAll();
  await unsharded?.proxy.stop();
  await cp.stop();
}
// Everything is stopped; a client's keep-alive socket must not hold the job open.
process.exit(failed ? 1 : 0);
