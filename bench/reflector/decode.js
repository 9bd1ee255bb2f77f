// The client's share of a watch-list cold sync, without a server: 50,000
// ConfigMap ADDED lines shaped like kube-apiserver's (about 1.4 KB each, with
// managedFields) and an end bookmark, handed over one line per chunk as the
// apiserver's stream arrives, decoded and stored by
//   - json-parse+map: the floor: JSON.parse of each line, objects kept in a Map;
//   - reflector: a Reflector over a ListerWatcher that feeds the same chunks
//     through NdjsonDecoder (what KubeListerWatcher does with the socket's
//     chunks), into an IndexedStore, until hasSynced().
// Each variant runs in its own process, RUNS times (default 5), rotated; the
// median wall and CPU times are printed.
// Run: bash scripts/with-node.sh npm run build && bash scripts/with-node.sh node bench/reflector/decode.js
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { IndexedStore, NdjsonDecoder, Reflector } from "@tessera/reflector";

const OBJECTS = Number(process.env.OBJECTS ?? 50_000);
const RUNS = Number(process.env.RUNS ?? 5);
const VARIANTS = ["json-parse+map", "reflector"];
const FILLER = "x".repeat(820);

function chunks() {
  const out = [];
  for (let i = 0; i < OBJECTS; i++) {
    const name = `cm-${String(i).padStart(6, "0")}`;
    const time = "2026-12-02T18:36:27Z";
    const object = {
      kind: "ConfigMap",
      apiVersion: "v1",
      metadata: {
        name,
        namespace: "bench",
        uid: `4b0089ac-6de3-42b7-abf0-${String(i).padStart(12, "0")}`,
        resourceVersion: String(1000 + i),
        creationTimestamp: time,
        labels: { app: "bench", shard: String(i % 16) },
        managedFields: [
          {
            manager: "unknown",
            operation: "Update",
            apiVersion: "v1",
            time,
            fieldsType: "FieldsV1",
            fieldsV1: {
              "f:data": { ".": {}, "f:filler": {}, "f:index": {} },
              "f:metadata": { "f:labels": { ".": {}, "f:app": {}, "f:shard": {} } },
            },
          },
        ],
      },
      data: { filler: FILLER, index: String(i) },
    };
    out.push(Buffer.from(JSON.stringify({ type: "ADDED", object }) + "\n"));
  }
  const end = {
    type: "BOOKMARK",
    object: {
      kind: "ConfigMap",
      apiVersion: "v1",
      metadata: {
        resourceVersion: String(1000 + OBJECTS),
        annotations: { "k8s.io/initial-events-end": "true" },
      },
    },
  };
  out.push(Buffer.from(JSON.stringify(end) + "\n"));
  return out;
}

function parseAndMap(input) {
  const byKey = new Map();
  for (const chunk of input) {
    const event = JSON.parse(chunk.toString("utf8", 0, chunk.length - 1));
    if (event.type !== "ADDED") continue;
    const meta = event.object.metadata;
    byKey.set(`${meta.namespace}/${meta.name}`, event.object);
  }
  return byKey.size;
}

async function reflector(input) {
  /** @type {import("@tessera/reflector").ListWatchErrorContext} */
  const context = { resource: "configmaps", verb: "watch" };
  const listerWatcher = {
    resource: "configmaps",
    namespace: undefined,
    list: () => Promise.reject(new Error("not listed in this benchmark")),
    watch: (options, onEvent, signal) =>
      new Promise((resolve, reject) => {
        if (!options.sendInitialEvents) return signal?.addEventListener("abort", () => resolve());
        const decoder = new NdjsonDecoder(context, (value) => onEvent(value));
        try {
          for (const chunk of input) decoder.write(chunk);
        } catch (err) {
          return reject(err);
        }
        signal?.addEventListener("abort", () => resolve());
      }),
  };
  const store = new IndexedStore();
  const r = new Reflector({ listerWatcher, store, consistencyCheck: false });
  const stop = new AbortController();
  const done = r.run(stop.signal);
  while (!r.hasSynced()) await new Promise((resolve) => setImmediate(resolve));
  const size = store.size;
  stop.abort();
  await done;
  return size;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const variant = process.argv[2];
if (variant) {
  const input = chunks();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const objects = variant === "reflector" ? await reflector(input) : parseAndMap(input);
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const bytes = input.reduce((n, c) => n + c.length, 0);
  console.log(
    JSON.stringify({
      variant,
      objects,
      bytes,
      ms: Math.round(ms),
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    }),
  );
} else {
  const self = fileURLToPath(import.meta.url);
  const results = Object.fromEntries(VARIANTS.map((v) => [v, []]));
  let bytes = 0;
  for (let r = 0; r < RUNS; r++) {
    const order = VARIANTS.map((_, i) => VARIANTS[(i + r) % VARIANTS.length]);
    for (const v of order) {
      const line = execFileSync(process.execPath, [self, v], { encoding: "utf8" }).trim().split("\n").at(-1);
      const result = JSON.parse(line);
      if (result.objects !== OBJECTS) throw new Error(`${v} stored ${result.objects} of ${OBJECTS}`);
      bytes = result.bytes;
      results[v].push(result);
      console.log(`run ${r + 1}: ${line}`);
    }
  }
  console.log("");
  console.log(`${OBJECTS} objects, ${(bytes / 1e6).toFixed(1)} MB of lines, one line per chunk`);
  console.log(`| variant | wall (median of ${RUNS}) | runs (ms) | CPU | x json-parse+map |`);
  console.log("|---|---|---|---|---|");
  const floor = median(results["json-parse+map"].map((x) => x.ms));
  for (const v of VARIANTS) {
    const ms = median(results[v].map((x) => x.ms));
    console.log(
      `| ${v} | ${ms} ms | ${results[v].map((x) => x.ms).join(", ")} | ${median(results[v].map((x) => x.cpuMs))} ms | ${(ms / floor).toFixed(2)} |`,
    );
  }
}
