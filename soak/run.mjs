// The fault soak (issue 17): the sharded-tenants example (3-5 replicas) and
// the leader-elected configmap-mirror example (2 replicas), as separate
// processes against a real kube-apiserver and etcd, under continuous writes,
// while faults from a seeded schedule are injected; an independent observer
// checks the invariants (see docs/reliability.md). Exit 1 on any violation.
//
//   node soak/run.mjs [--minutes 10] [--seed N] [--objects 200] [--json soak.json]
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { ControlPlane } from "@tessera/testenv";
import { inject } from "./faults.mjs";
import { MIRROR_TARGET, Observer, TENANTS } from "./observer.mjs";
import { Replicas } from "./replicas.mjs";
import { print, report, rssFigures } from "./report.mjs";
import { nextFault, seededRandom } from "./schedule.mjs";

const { values } = parseArgs({
  options: {
    minutes: { type: "string", default: "10" },
    seed: { type: "string" },
    objects: { type: "string", default: "200" },
    json: { type: "string" },
  },
});
const MINUTES = Number(values.minutes);
const OBJECTS = Number(values.objects);
const SEED = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
if (!(MINUTES > 0) || !Number.isInteger(OBJECTS) || OBJECTS < 1 || !Number.isInteger(SEED)) {
  console.error("soak: --minutes takes a number > 0, --objects a whole number >= 1, --seed a whole number");
  process.exit(2);
}
/** How long the invariants may take to hold again after a fault before that is a violation. */
const CONVERGE_LIMIT_MS = 90_000;
const SOURCES = 10;
const examples = {
  sharded: fileURLToPath(new URL("../examples/sharded-tenants/", import.meta.url)),
  leader: fileURLToPath(new URL("../examples/configmap-mirror/", import.meta.url)),
};
const work = mkdtempSync(join(tmpdir(), "tessera-soak-"));
const jsonPath = values.json ?? join(work, "soak.json");
const started = Date.now();
const say = (line) => console.log(`soak: ${line}`);
say(`seed ${SEED} (replay: npm run soak -- --seed ${SEED} --minutes ${MINUTES}); logs in ${work}`);

const cp = new ControlPlane({ crds: [join(examples.sharded, "deploy/base/crds")] });
let observer;
let ending = false;
const replicas = new Replicas({
  cp,
  work,
  onLine: (r, entry) => observer.onLine(r, entry),
  onExit: (r, code, signal) => {
    observer.onExit(r, code, signal);
    // Restarted as a kubelet would, unless the soak stopped it or is ending.
    if (!r.stopping && !ending)
      start(r.example).catch((err) => observer.event(`restart failed: ${err.message}`));
  },
});
observer = new Observer({ cp, replicas, started });
process.on("unhandledRejection", (err) =>
  observer.violation("no unhandled rejection", `the soak itself: ${err}`),
);

const start = (example) => replicas.start(example, join(examples[example], "dist/src/main.js"));
const leaderOf = async (prefix, example) => {
  for (const [r, names] of await observer.leading())
    if (r.example === example && names.some((n) => n.includes(prefix))) return r;
  return undefined;
};

async function call(method, path, body, contentType = "application/json") {
  const res = await cp.raw(path, {
    method,
    headers: { "content-type": contentType },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: HTTP ${res.status}: ${res.body.slice(0, 200)}`);
  return JSON.parse(res.body);
}

/** Waits until every write in `wanted` is reconciled; the time it took, or undefined past the limit. */
async function converge(wanted, since, what) {
  let late = [];
  while (Date.now() - since < CONVERGE_LIMIT_MS) {
    try {
      late = await observer.lagging(wanted);
      if (late.length === 0) return Date.now() - since;
    } catch (err) {
      late = [`(LIST failed: ${err.message})`];
    }
    await sleep(500);
  }
  observer.violation(
    "every write reconciled after its last change",
    `${what}: ${late.length} not reconciled ${CONVERGE_LIMIT_MS / 1000} s after: ${late.slice(0, 8).join(", ")}`,
  );
  return undefined;
}

// Continuous writes: a Tenant's spec or a mirrored source's data, about ten a second.
const counters = { writes: 0, failed: 0 };
let writing = true;
async function writer(random) {
  const tiers = ["free", "team", "enterprise"];
  let v = 1;
  while (writing) {
    try {
      if (random() < 0.8) {
        const name = `tenant-${Math.floor(random() * OBJECTS)}`;
        const body = {
          spec: { tier: tiers[Math.floor(random() * 3)], displayName: `Tenant ${name} v${v++}` },
        };
        const t = await call("PATCH", `${TENANTS}/${name}`, body, "application/merge-patch+json");
        observer.tenantGenerations.set(name, t.metadata.generation);
      } else {
        const name = `source-${Math.floor(random() * SOURCES)}`;
        const value = v++;
        await call(
          "PATCH",
          `/api/v1/namespaces/default/configmaps/${name}`,
          { data: { v: String(value) } },
          "application/merge-patch+json",
        );
        observer.mirrorValues.set(name, value);
      }
      counters.writes++;
    } catch {
      counters.failed++; // the API server is restarting or etcd is down: a later write covers the key
    }
    await sleep(100);
  }
}

let sampling = true;
async function sampler() {
  while (sampling) {
    await observer.sample().catch(() => {});
    await sleep(1000);
  }
}

const faults = [];
const convergence = {};
let failed;
try {
  say("starting etcd and kube-apiserver");
  await cp.start();
  await call("POST", "/api/v1/namespaces", { metadata: { name: MIRROR_TARGET } });
  for (let i = 0; i < OBJECTS; i += 50)
    await Promise.all(
      Array.from({ length: Math.min(50, OBJECTS - i) }, async (_, j) => {
        const t = await call("POST", TENANTS, {
          apiVersion: "tenancy.example.com/v1alpha1",
          kind: "Tenant",
          metadata: { name: `tenant-${i + j}` },
          spec: { displayName: `Tenant ${i + j}`, owners: ["soak"] },
        });
        observer.tenantGenerations.set(t.metadata.name, t.metadata.generation);
      }),
    );
  for (let i = 0; i < SOURCES; i++) {
    await call("POST", "/api/v1/namespaces/default/configmaps", {
      metadata: {
        name: `source-${i}`,
        labels: { "mirror.example.com/mirror": "true" },
        annotations: { "mirror.example.com/namespaces": MIRROR_TARGET },
      },
      data: { v: "0" },
    });
    observer.mirrorValues.set(`source-${i}`, 0);
  }
  for (let i = 0; i < 3; i++) await start("sharded");
  for (let i = 0; i < 2; i++) await start("leader");
  const sampling$ = sampler();
  say(
    `${OBJECTS} Tenants, ${SOURCES} mirrored ConfigMaps, 3 sharded and 2 leader-elected replicas; waiting for the first sync`,
  );
  const first = await converge(observer.snapshot(), Date.now(), "first sync");
  say(
    `first sync in ${first === undefined ? "(not converged)" : `${(first / 1000).toFixed(1)} s`}; faults for ${MINUTES} min`,
  );
  const writing$ = writer(seededRandom(SEED ^ 0x5eed));
  const schedule = seededRandom(SEED);
  const soakStarted = Date.now();
  const deadline = soakStarted + MINUTES * 60_000;
  while (Date.now() < deadline) {
    const fault = nextFault(schedule, replicas.live("sharded").length);
    const at = observer.now();
    observer.event(`fault ${fault.kind} begins`);
    let what;
    try {
      what = await inject(fault, { cp, replicas, start, leaderOf });
    } catch (err) {
      what = `could not be injected: ${err.message}`;
    }
    const ended = Date.now();
    observer.event(`fault ${fault.kind} ended: ${what}`);
    say(`${(observer.now() / 1000).toFixed(0)} s: ${fault.kind}: ${what}`);
    faults.push({ kind: fault.kind, at, endedAt: observer.now(), what });
    const ms = await converge(observer.snapshot(), ended, `after ${fault.kind}`);
    if (ms !== undefined) (convergence[fault.kind] ??= []).push(ms);
    observer.event(`converged after ${fault.kind} in ${ms ?? "(never)"} ms`);
    await sleep(fault.gapMs);
  }
  writing = false;
  await writing$;
  ending = true;
  await converge(observer.snapshot(), Date.now(), "the end of the run");
  sampling = false;
  await sampling$;
  await observer.sample();
  const rss = rssFigures(replicas.all);
  for (const r of rss)
    if (r.unbounded)
      observer.violation(
        "RSS does not grow without bound",
        `${r.replica}: ${r.secondHalfSlopeMiBPerMin.toFixed(1)} MiB/min over the second half`,
      );
  const figures = report({
    seed: SEED,
    minutes: MINUTES,
    faults,
    convergence,
    writes: counters.writes,
    failedWrites: counters.failed,
    reconciles: observer.reconciles,
    tenantsMissing: observer.tenantsMissing,
    restarts: observer.restarts,
    violations: observer.violations,
    rss,
    wallMs: Date.now() - started,
  });
  print(figures, jsonPath);
  failed = observer.violations.length > 0;
} catch (err) {
  failed = true;
  console.error(`soak: FAILED: ${err.stack ?? err}`);
} finally {
  ending = true;
  writing = false;
  sampling = false;
  await replicas.stopAll().catch(() => {});
  await cp.stop().catch(() => {});
}
say(
  failed
    ? `FAILED (seed ${SEED}; replay with --seed ${SEED}); logs in ${work}`
    : `passed, 0 violations (seed ${SEED})`,
);
process.exit(failed ? 1 : 0);
