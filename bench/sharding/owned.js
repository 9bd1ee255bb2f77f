// What sharding saves each replica when owned objects follow their owner's
// shard (docs/concepts/sharding.md, "Owned objects follow their owner"):
// the sharded-tenants example (examples/sharded-tenants) run as 1 and then
// 4 replicas, each a process of its own behind a FaultProxy of its own that
// counts the bytes the API server sends it (soak/replicas.mjs, as the demo
// runs them), over TENANTS Tenants (default 2,000; each owns a ConfigMap and
// a ServiceAccount) plus 2,000 unrelated ConfigMaps and 500 unrelated
// ServiceAccounts in another namespace.
//
// Per replica count, on a fresh control plane: the unrelated objects are
// loaded, the replicas start and their ring settles, then the Tenants are
// created; the run ends once every Tenant is Ready at its generation (a
// fresh LIST) and the replicas' caches hold every owned object between them.
// Reported per replica: bytes received from the API server (until the
// replicas are quiet, under 10 kB/s each; a 10 s window after it gives the
// idle rate), peak RSS
// (VmHWM), objects cached per kind (tessera_informer_objects from its
// /metrics), of those the owned ones in its slots (the owned objects whose
// owner-slot label is a slot the published assignment gives it) and the
// rest (unrelated), and the ratios to one replica; its floor (bytes and
// peak RSS once the ring settled, before any Tenant); then the issue's
// aims, each met or not.
//
// With --handover, one more replica then joins the last ring: the
// kube-apiserver's apiserver_request_total (LIST and WATCH of each owned
// kind) while the ring settles again, beside the slot runs the new replica
// gained and its initial syncs, and the other replicas' new initial syncs
// (kept slots are not relisted: 0). Its ConfigMap counts include the ring's
// assignment ConfigMap (watched by the new replica) and the new replica's
// look for unlabelled children: one metadata-only LIST per owned kind of
// the namespace its Tenants are in (`default`).
//
// Replicas run as the example's image runs them (--entry image, the default): the bundle of
// `tessera bundle`, with the node flags of the Dockerfile's ENTRYPOINT and its last stage's ENV; --entry source runs
// its compiled modules (dist/src/main.js) with no flags, as the runs before 2026-12-05 did.
//
// Run: bash scripts/with-node.sh node bench/sharding/owned.js [--tenants 2000] [--replicas 1,4] [--handover] [--entry image|source]
//      (after npm run build and a build of examples/sharded-tenants; needs the control-plane binaries)
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { readRings } from "@tessera/cli";
import { ApiClient } from "@tessera/runtime";
import { ControlPlane, parsePrometheusText } from "@tessera/testenv";
import { countsSince, pool, post, requestCounts } from "../lib/apiserver.js";
import { writeResult } from "../lib/results.js";

// The soak's replica runner, as the demo uses it. Imported by URL so that the bench's
// type check (tsc -p bench) does not take in soak/, which it does not cover.
const { Replicas } = await import(new URL("../../soak/replicas.mjs", import.meta.url).href);

const { values } = parseArgs({
  options: {
    tenants: { type: "string", default: "2000" },
    replicas: { type: "string", default: "1,4" },
    handover: { type: "boolean", default: false },
    entry: { type: "string", default: "image" },
  },
});
const TENANTS = Number(values.tenants);
const COUNTS = values.replicas.split(",").map(Number);
const UNRELATED_CONFIGMAPS = 2000;
const UNRELATED_SERVICEACCOUNTS = 500;
const OTHER = "unrelated";
const OWNER_SLOT = "sharding.tessera.dev/owner-slot";
const example = fileURLToPath(new URL("../../examples/sharded-tenants/", import.meta.url));
if (values.entry !== "image" && values.entry !== "source") {
  console.error(
    `owned: --entry ${values.entry}: image (the bundle, as the example's image runs it) or source (dist/src/main.js)`,
  );
  process.exit(2);
}
/**
 * How each replica runs. `image`: as the example's Dockerfile runs it, the bundle `tessera bundle` writes
 * (bundled here, as its image build does) with the ENTRYPOINT's node flags. `source`: its compiled modules.
 */
const { OPERATOR, NODE_ARGS, IMAGE_ENV } =
  values.entry === "image"
    ? await imageEntry()
    : { OPERATOR: join(example, "dist/src/main.js"), NODE_ARGS: [], IMAGE_ENV: {} };

/**
 * The example's ENTRYPOINT (`["node", ...flags, script]`) and the ENV of its image's last stage, with its
 * bundle written by the CLI's bundler.
 */
async function imageEntry() {
  const lines = readFileSync(join(example, "Dockerfile"), "utf8").split("\n");
  const stage = lines.slice(lines.findLastIndex((l) => l.startsWith("FROM ")));
  const line = stage.find((l) => l.startsWith("ENTRYPOINT "));
  const env = Object.fromEntries(
    stage
      .filter((l) => l.startsWith("ENV "))
      .flatMap((l) => l.slice("ENV ".length).trim().split(/\s+/))
      .map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]),
  );
  const words = line ? JSON.parse(line.slice("ENTRYPOINT ".length)) : [];
  if (words[0] !== "node" || words.length < 2) {
    console.error(
      `owned: the example's Dockerfile has no ENTRYPOINT ["node", ..., "<script>"] to run its replicas as the image does; use --entry source`,
    );
    process.exit(2);
  }
  if (!existsSync(join(example, "dist/src/main.js")))
    return { OPERATOR: join(example, "dist/src/main.js"), NODE_ARGS: [], IMAGE_ENV: {} };
  const { runBundle } = await import("@tessera/cli");
  await runBundle({ dir: example });
  return { OPERATOR: join(example, words.at(-1)), NODE_ARGS: words.slice(1, -1), IMAGE_ENV: env };
}
const GROUP = "tenancy.example.com";
const KINDS = [
  { kind: "ConfigMap", resource: "configmaps", path: "/api/v1" },
  { kind: "ServiceAccount", resource: "serviceaccounts", path: "/api/v1" },
];
if (!existsSync(OPERATOR)) {
  console.error(
    `owned: ${OPERATOR} is missing; build the example first: npm run build && npm run build:examples`,
  );
  process.exit(2);
}
const say = (line) => console.log(`owned: ${line}`);
const MB = (b) => (b / 1e6).toFixed(1);
const MiB = (b) => (b / 2 ** 20).toFixed(0);

/** Peak resident set of a live process, in bytes (VmHWM). */
function peakRss(pid) {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) * 1024 : NaN;
}

/** Objects each informer of a replica caches, by resource (summed over its informers, as `cache` labels them). */
async function cached(replica) {
  const res = await fetch(`http://127.0.0.1:${replica.metricsPort}/metrics`, {
    signal: AbortSignal.timeout(2000),
  });
  const families = parsePrometheusText(await res.text());
  /** @type {Record<string, number>} */
  const by = {};
  for (const s of families.get("tessera_informer_objects")?.samples ?? [])
    by[s.labels.resource] = (by[s.labels.resource] ?? 0) + s.value;
  return by;
}

// The bench's own LISTs of ConfigMaps (readRings lists the ring's ConfigMaps), taken out of the apiserver's counts.
let ownConfigMapLists = 0;
function readRing(client) {
  ownConfigMapLists++;
  return readRings(client, "default").then(([r]) => r);
}

/** Waits until the published assignment is settled over the live replicas; returns it. */
async function settled(client, replicas, work) {
  const t0 = Date.now();
  const live = () => new Set(replicas.live().map((r) => r.name));
  for (;;) {
    const ring = await readRing(client).catch(() => undefined);
    const done =
      ring &&
      ring.assignment.releasing.size === 0 &&
      new Set(ring.assignment.owners).size === live().size &&
      ring.assignment.owners.every((o) => o !== undefined && live().has(o)) &&
      ring.members
        .filter((m) => live().has(m.identity))
        .every((m) => m.acknowledgedEpoch === ring.assignment.epoch);
    if (done) return ring;
    if (Date.now() - t0 > 120_000)
      throw new Error(`${live().size} replicas: ring not settled after 120 s (logs in ${work})`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Initial syncs (LISTs and watch-lists) per reflector of `resource` on a replica, from its /metrics. */
async function syncs(replica, resource) {
  const res = await fetch(`http://127.0.0.1:${replica.metricsPort}/metrics`, {
    signal: AbortSignal.timeout(2000),
  });
  const families = parsePrometheusText(await res.text());
  /** @type {Map<string, number>} */
  const out = new Map();
  const add = (s) => out.set(s.labels.reflector, (out.get(s.labels.reflector) ?? 0) + s.value);
  for (const s of families.get("tessera_reflector_lists_total")?.samples ?? [])
    if (s.labels.resource === resource) add(s);
  for (const s of families.get("tessera_reflector_watches_total")?.samples ?? [])
    if (s.labels.resource === resource && s.labels.mode === "watch-list") add(s);
  return out;
}

/** Runs of adjacent slots in a set of slot numbers. */
function runs(slots) {
  const sorted = [...slots].sort((a, b) => a - b);
  return sorted.filter((s, i) => i === 0 || sorted[i - 1] !== s - 1).length;
}

/**
 * One more replica joins a settled ring: what the kube-apiserver counted
 * (apiserver_request_total, LIST and WATCH of each owned kind) while the
 * ring settled again, beside the slot runs the new replica gained, its own
 * initial syncs, and the old replicas' new initial syncs (kept slots must
 * not be relisted: 0).
 */
async function handover(cp, client, replicas, work) {
  const old = replicas.live();
  const before = await readRing(client);
  const ownBefore = ownConfigMapLists;
  const counts = Object.fromEntries(
    await Promise.all(KINDS.map(async (k) => [k.resource, await requestCounts(cp, k.resource)])),
  );
  const oldSyncs = await Promise.all(old.map((r) => Promise.all(KINDS.map((k) => syncs(r, k.resource)))));
  const t0 = Date.now();
  const joiner = await replicas.start("replica", OPERATOR, NODE_ARGS);
  const after = await settled(client, replicas, work);
  const secs = (Date.now() - t0) / 1000;
  // Wait for the new replica's owned caches to hold its share: the handover's lists are done.
  const gained = new Set(after.assignment.owners.flatMap((o, s) => (o === joiner.name ? [s] : [])));
  const from = new Set(before.assignment.owners.flatMap((o, s) => (gained.has(s) ? [o] : [])));
  const lines = [
    `handover ${old.length} -> ${old.length + 1}: ${joiner.name} gained ${gained.size} slots in ${runs(gained)} runs (from ${[...from].join(", ")}); settled in ${secs.toFixed(1)} s`,
  ];
  await new Promise((r) => setTimeout(r, 3000));
  for (const [i, k] of KINDS.entries()) {
    const server = countsSince(counts[k.resource], await requestCounts(cp, k.resource));
    const own = k.resource === "configmaps" ? ownConfigMapLists - ownBefore : 0;
    const mine = [...(await syncs(joiner, k.resource)).entries()].filter(
      ([r, n]) => n > 0 && r.includes("[0x"),
    );
    let relisted = 0;
    for (const [j, r] of old.entries()) {
      const now = await syncs(r, k.resource);
      for (const [reflector, n] of now) relisted += n - (oldSyncs[j][i].get(reflector) ?? 0);
    }
    lines.push(
      `  ${k.resource}: apiserver_request_total during the handover: LIST ${(server.LIST ?? 0) - own}${own ? ` (less this bench's ${own} reads of the ring)` : ""}, WATCH ${server.WATCH ?? 0}; ` +
        `${joiner.name}'s initial syncs (LIST or watch-list): ${mine.reduce((s, [, n]) => s + n, 0)} over ${mine.length} slot-run reflectors; ` +
        `the ${old.length} other replicas' new initial syncs: ${relisted}`,
    );
  }
  return lines;
}

async function run(count, withHandover) {
  const cp = new ControlPlane({ crds: [join(example, "deploy/base/crds")] });
  const work = mkdtempSync(join(tmpdir(), "tessera-bench-owned-"));
  const replicas = new Replicas({
    cp,
    work,
    // No Lease timings: the runtime's defaults (15/10/2 s), as an operator runs them; the
    // Lease renewals and the ring's reads are each replica's fixed cost. The image's ENV, as it runs.
    env: IMAGE_ENV,
  });
  await cp.start();
  const client = new ApiClient(cp.kubeConfig, { fieldManager: "bench" });
  try {
    await post(cp, "/api/v1/namespaces", { metadata: { name: OTHER } });
    await pool(UNRELATED_CONFIGMAPS, 16, (i) =>
      post(cp, `/api/v1/namespaces/${OTHER}/configmaps`, {
        metadata: { name: `unrelated-${i}` },
        data: { value: `unrelated ConfigMap ${i}`.padEnd(200, ".") },
      }),
    );
    await pool(UNRELATED_SERVICEACCOUNTS, 16, (i) =>
      post(cp, `/api/v1/namespaces/${OTHER}/serviceaccounts`, { metadata: { name: `unrelated-${i}` } }),
    );
    const t0 = Date.now();
    for (let i = 0; i < count; i++) await replicas.start("replica", OPERATOR, NODE_ARGS);
    await settled(client, replicas, work);
    // Each replica's floor: what start-up and the ring cost it before there is any Tenant.
    const floor = new Map(
      replicas.live().map((r) => [r.name, { bytes: r.proxy.stats.bytesDown, rss: peakRss(r.pid) }]),
    );
    say(
      `${count} replica(s): ring settled after ${((Date.now() - t0) / 1000).toFixed(1)} s; creating ${TENANTS} Tenants`,
    );
    const t1 = Date.now();
    await pool(TENANTS, 16, (i) =>
      post(cp, `/apis/${GROUP}/v1alpha1/namespaces/default/tenants`, {
        apiVersion: `${GROUP}/v1alpha1`,
        kind: "Tenant",
        metadata: { name: `tenant-${i}` },
        spec: { displayName: `Tenant ${i}`, owners: ["bench"] },
      }),
    );
    let ready = 0;
    let held = {};
    for (let last = 0; ;) {
      const list = JSON.parse((await cp.raw(`/apis/${GROUP}/v1alpha1/namespaces/default/tenants`)).body);
      ready = list.items.filter(
        (t) =>
          t.status?.observedGeneration === t.metadata.generation &&
          t.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
      ).length;
      const counts = await Promise.all(replicas.live().map((r) => cached(r).catch(() => ({}))));
      held = Object.fromEntries(
        KINDS.map((k) => [k.resource, counts.reduce((s, c) => s + (c[k.resource] ?? 0), 0)]),
      );
      if (ready === TENANTS && KINDS.every((k) => held[k.resource] >= TENANTS)) break;
      if (Date.now() - t1 > 600_000)
        throw new Error(`${count} replicas: ${ready}/${TENANTS} Ready after 600 s (logs in ${work})`);
      if (Date.now() - last > 10_000) {
        say(`  ${ready}/${TENANTS} Ready; cached between them: ${JSON.stringify(held)}`);
        last = Date.now();
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    const converged = (Date.now() - t1) / 1000;
    // Every Tenant is Ready, but the echoes of the last writes are still being reconciled:
    // wait until each replica receives under 10 kB/s (over 2 s), at most 120 s, so that
    // "received" is the whole work's.
    for (const quietFrom = Date.now(); Date.now() - quietFrom < 120_000;) {
      const from = replicas.live().map((r) => r.proxy.stats.bytesDown);
      await new Promise((r) => setTimeout(r, 2000));
      if (replicas.live().every((r, i) => r.proxy.stats.bytesDown - from[i] < 20_000)) break;
    }
    const quiet = (Date.now() - t1) / 1000;
    // The idle rate after: Lease renewals, the ring's reads, nothing of the Tenants.
    const idleFrom = new Map(replicas.live().map((r) => [r.name, r.proxy.stats.bytesDown]));
    const IDLE_S = 10;
    await new Promise((r) => setTimeout(r, IDLE_S * 1000));
    // The truth to hold the caches against: each owned object's slot (its label), the slot's owner.
    const assignment = (await readRing(client)).assignment;
    const slotsOf = (id) => new Set(assignment.owners.flatMap((o, s) => (o === id ? [s] : [])));
    /** @type {Record<string, number[]>} */
    const ownedSlots = {};
    for (const k of KINDS) {
      const list = JSON.parse(
        (await cp.raw(`${k.path}/namespaces/default/${k.resource}?labelSelector=${OWNER_SLOT}`)).body,
      );
      ownedSlots[k.resource] = list.items.map((o) => Number(o.metadata.labels[OWNER_SLOT]));
    }
    const rows = [];
    for (const r of replicas.live()) {
      const mine = slotsOf(r.name);
      const objects = await cached(r);
      const row = {
        replicas: count,
        replica: r.name,
        slots: mine.size,
        bytes: idleFrom.get(r.name),
        peakRss: peakRss(r.pid),
        floorBytes: floor.get(r.name).bytes,
        floorRss: floor.get(r.name).rss,
        idleBytesPerSecond: (r.proxy.stats.bytesDown - idleFrom.get(r.name)) / IDLE_S,
        seconds: (Date.now() - t0) / 1000,
        tenants: objects[`tenants.${GROUP}`] ?? 0,
        converged,
        quiet,
      };
      for (const k of KINDS) {
        const owned = ownedSlots[k.resource].filter((s) => mine.has(s)).length;
        row[k.resource] = {
          cached: objects[k.resource] ?? 0,
          owned: Math.min(owned, objects[k.resource] ?? 0),
          unrelated: Math.max(0, (objects[k.resource] ?? 0) - owned),
        };
      }
      rows.push(row);
    }
    const handoverLines = withHandover ? await handover(cp, client, replicas, work) : [];
    say(
      `${count} replica(s): every Tenant Ready and every owned object cached ${converged.toFixed(1)} s after the creates, quiet after ${quiet.toFixed(1)} s`,
    );
    return { rows, handoverLines };
  } finally {
    await replicas.stopAll();
    await cp.stop();
  }
}

const load = loadavg();
const all = [];
const handoverLines = [];
for (const [i, count] of COUNTS.entries()) {
  const result = await run(count, values.handover && i === COUNTS.length - 1);
  all.push(...result.rows);
  handoverLines.push(...result.handoverLines);
}
const one = all.filter((r) => r.replicas === 1);
const base = one.length ? { bytes: one[0].bytes, peakRss: one[0].peakRss } : undefined;
const ratio = (v, b) => (b ? `${(v / b).toFixed(2)}x` : "");
console.log("");
console.log(
  `${TENANTS} Tenants (each owning a ConfigMap and a ServiceAccount), ${UNRELATED_CONFIGMAPS} unrelated ConfigMaps and ${UNRELATED_SERVICEACCOUNTS} unrelated ServiceAccounts in namespace ${OTHER}; replicas run as ${
    values.entry === "image"
      ? `the image does: ${Object.entries(IMAGE_ENV)
          .map(([k, v]) => `${k}=${v} `)
          .join("")}node ${[...NODE_ARGS, relative(example, OPERATOR)].join(" ")}`
      : "node dist/src/main.js"
  }; load average at start ${load.map((l) => l.toFixed(2)).join(", ")}`,
);
console.log(
  "| replicas | replica | slots | received | x 1 replica | peak RSS | x 1 replica | Tenants cached | ConfigMaps cached (owned, unrelated) | ServiceAccounts cached (owned, unrelated) | before any Tenant: received, RSS | idle after |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|---|---|");
for (const r of all)
  console.log(
    `| ${r.replicas} | ${r.replica} | ${r.slots} | ${MB(r.bytes)} MB | ${ratio(r.bytes, base?.bytes)} | ${MiB(r.peakRss)} MiB | ${ratio(r.peakRss, base?.peakRss)} | ${r.tenants} | ${r.configmaps.cached} (${r.configmaps.owned}, ${r.configmaps.unrelated}) | ${r.serviceaccounts.cached} (${r.serviceaccounts.owned}, ${r.serviceaccounts.unrelated}) | ${MB(r.floorBytes)} MB, ${MiB(r.floorRss)} MiB | ${(r.idleBytesPerSecond / 1e3).toFixed(1)} kB/s |`,
  );
for (const count of COUNTS.filter((c) => c > 1)) {
  const rows = all.filter((r) => r.replicas === count);
  const sum = rows.reduce((s, r) => s + r.bytes, 0);
  console.log(`${count} replicas together received ${MB(sum)} MB: ${ratio(sum, base?.bytes)} one replica's`);
}

for (const line of handoverLines) console.log(line);

// The issue's aims (issue 29), at the largest replica count beside one replica.
const n = Math.max(...COUNTS);
const many = all.filter((r) => r.replicas === n);
if (base && n > 1) {
  const share = (TENANTS / n) * 1; // owned objects of one kind a replica should hold
  const aims = [
    [
      `at ${n} replicas each receives at most 0.28x the bytes one replica receives`,
      many.every((r) => r.bytes <= 0.28 * base.bytes),
      many.map((r) => ratio(r.bytes, base.bytes)).join(", "),
    ],
    [
      `each holds about 1/${n} of the owned objects (within 10%) and none of the unrelated ones`,
      many.every((r) =>
        KINDS.every(
          (k) => Math.abs(r[k.resource].owned - share) <= 0.1 * share && r[k.resource].unrelated === 0,
        ),
      ),
      many
        .map((r) => KINDS.map((k) => `${r[k.resource].owned}+${r[k.resource].unrelated}`).join("/"))
        .join(", ") + ` (owned+unrelated ConfigMaps/ServiceAccounts; 1/${n} is ${share})`,
    ],
    [
      "peak RSS per replica at most 0.65x one replica's",
      many.every((r) => r.peakRss <= 0.65 * base.peakRss),
      many.map((r) => ratio(r.peakRss, base.peakRss)).join(", "),
    ],
    [
      "one replica caches no unrelated object (its look for unlabelled children lists only its Tenants' namespace)",
      one.every((r) => KINDS.every((k) => r[k.resource].unrelated === 0)),
      KINDS.map((k) => `${one[0][k.resource].cached} ${k.resource} cached of ${TENANTS} owned`).join(", "),
    ],
  ];
  for (const [aim, met, figures] of aims) console.log(`aim: ${aim}: ${met ? "met" : "NOT met"} (${figures})`);
}

writeResult({
  name: "sharding-owned",
  title: `Bytes received per replica, sharded-tenants over ${TENANTS} Tenants plus unrelated objects`,
  unit: "MB",
  lowerIsBetter: true,
  groups: COUNTS.map((count) => ({
    label: `${count} replica${count === 1 ? "" : "s"}`,
    bars: all
      .filter((r) => r.replicas === count)
      .map((r) => ({ label: r.replica, median: r.bytes / 1e6, min: r.bytes / 1e6, max: r.bytes / 1e6 })),
  })),
  note: `load average at start ${load.map((l) => l.toFixed(2)).join(", ")}`,
  rows: all,
});
process.exit(0);
