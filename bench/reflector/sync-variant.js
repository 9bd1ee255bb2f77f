// One cold sync of one variant, in its own process, so that each gets a fresh
// heap and its own peak RSS. Prints one JSON line:
//   {"variant", "objects", "ms", "cpuMs", "peakRssMiB", "baselineRssMiB"}
// (cpuMs: this process's user + system CPU time during the sync, startup
// excluded; the limit adds "chunks": how many reads the stream arrived in)
// Run by cold-sync.js: node sync-variant.js <variant> <kubeconfig> <namespace|*> <expected objects>
import { request } from "node:https";
import { URLSearchParams } from "node:url";
import { CoreV1Api, KubeConfig, makeInformer } from "@kubernetes/client-node";
import { ConfigMaps } from "@tessera/client";
import { DeltaFIFO, IndexedStore, KubeListerWatcher, Reflector } from "@tessera/reflector";

const [variant, kubeconfigPath, namespaceArg, expectedArg] = process.argv.slice(2);
const namespace = namespaceArg === "*" ? undefined : namespaceArg;
const expected = Number(expectedArg);
const kc = new KubeConfig();
kc.loadFromFile(kubeconfigPath);
const collection = namespace ? `/api/v1/namespaces/${namespace}/configmaps` : "/api/v1/configmaps";

const mib = (bytes) => bytes / 1024 / 1024;
/** What a variant adds to its line of output. */
const extra = {};
const baselineRss = process.memoryUsage().rss;

/**
 * Tessera's reflector into a plain IndexedStore; `compression` "gzip" offers Accept-Encoding: gzip,
 * `wire` "protobuf" asks for Kubernetes protobuf.
 * @param {boolean} watchList
 * @param {import("@tessera/reflector").Compression} [compression]
 * @param {"json" | "protobuf"} [wire]
 */
async function tessera(watchList, compression = "none", wire = "json") {
  const store = new IndexedStore();
  const reflector = new Reflector({
    listerWatcher: new KubeListerWatcher(kc, ConfigMaps, {
      ...(namespace ? { namespace } : {}),
      compression,
      wire,
    }),
    store,
    watchList,
    consistencyCheck: false,
  });
  const stop = new AbortController();
  const done = reflector.run(stop.signal);
  await until(() => reflector.hasSynced());
  const count = store.size;
  stop.abort();
  await done;
  return count;
}

/** Tessera's reflector into a DeltaFIFO drained into an IndexedStore, as an informer runs it. */
async function tesseraFifo() {
  const cache = new IndexedStore();
  const fifo = new DeltaFIFO({ knownObjects: cache });
  const reflector = new Reflector({
    listerWatcher: new KubeListerWatcher(kc, ConfigMaps, namespace ? { namespace } : {}),
    store: fifo,
    consistencyCheck: false,
  });
  const stop = new AbortController();
  const done = reflector.run(stop.signal);
  const apply = (batch) => {
    for (const d of batch.deltas) {
      if (d.type === "Deleted") cache.delete(d.object);
      else cache.update(d.object);
    }
  };
  while (!fifo.hasSynced()) {
    if (!fifo.popSync(apply)) await fifo.pop(apply, stop.signal);
  }
  const count = cache.size;
  stop.abort();
  await done;
  return count;
}

/** @kubernetes/client-node's informer (LIST through the generated client, then WATCH). */
async function clientNode() {
  const core = kc.makeApiClient(CoreV1Api);
  const list = namespace
    ? () => core.listNamespacedConfigMap({ namespace })
    : () => core.listConfigMapForAllNamespaces();
  const informer = makeInformer(kc, collection, list);
  await informer.start();
  await until(() => informer.list().length >= expected);
  const count = informer.list().length;
  await informer.stop();
  return count;
}

/** The limit: the same watch-list request, its bytes received and discarded until the end bookmark. */
async function limit() {
  const query = new URLSearchParams({
    watch: "1",
    sendInitialEvents: "true",
    allowWatchBookmarks: "true",
    resourceVersionMatch: "NotOlderThan",
    resourceVersion: "",
    timeoutSeconds: "300",
  });
  const options = { method: "GET", headers: { Accept: "application/json" } };
  await kc.applyToHTTPSOptions(options);
  const url = new URL(`${kc.getCurrentCluster().server}${collection}?${query}`);
  const marker = Buffer.from("k8s.io/initial-events-end");
  return new Promise((resolve, reject) => {
    const req = request(url, options, (res) => {
      let lines = 0;
      let tail = Buffer.alloc(0);
      extra.chunks = 0;
      res.on("data", (chunk) => {
        extra.chunks++;
        // The marker may straddle two chunks: look at the end of the last one too.
        const at = chunk.indexOf(marker);
        const straddles =
          at === -1 &&
          tail.length > 0 &&
          Buffer.concat([tail, chunk.subarray(0, marker.length)]).indexOf(marker) !== -1;
        const end = at === -1 ? chunk.length : at;
        for (let i = chunk.indexOf(10); i !== -1 && i < end; i = chunk.indexOf(10, i + 1)) lines++;
        if (at !== -1 || straddles) {
          req.destroy();
          resolve(lines);
        }
        tail = chunk.subarray(Math.max(0, chunk.length - marker.length));
      });
      res.on("error", () => {});
    });
    req.on("error", (/** @type {NodeJS.ErrnoException} */ err) =>
      err.code === "ECONNRESET" ? undefined : reject(err),
    );
    req.end();
  });
}

async function until(check) {
  while (!check()) await new Promise((r) => setTimeout(r, 5));
}

const variants = {
  "tessera-watch-list": () => tessera(true),
  "tessera-watch-list+fifo": tesseraFifo,
  "tessera-list-watch": () => tessera(false),
  "tessera-watch-list-gzip": () => tessera(true, "gzip"),
  "tessera-list-watch-gzip": () => tessera(false, "gzip"),
  "tessera-watch-list-protobuf": () => tessera(true, "none", "protobuf"),
  "tessera-watch-list-protobuf-gzip": () => tessera(true, "gzip", "protobuf"),
  "client-node-informer": clientNode,
  limit,
};
const run = variants[variant];
if (!run) throw new Error(`unknown variant ${variant}; one of ${Object.keys(variants).join(", ")}`);
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const objects = await run();
const ms = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const usage = process.resourceUsage();
console.log(
  JSON.stringify({
    variant,
    objects,
    ms: Math.round(ms),
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    peakRssMiB: Math.round(usage.maxRSS / 1024),
    baselineRssMiB: Math.round(mib(baselineRss)),
    ...extra,
  }),
);
process.exit(0);
