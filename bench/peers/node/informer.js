// The Node contenders of bench/peers, speaking the informer protocol of
// bench/peers/README.md. BENCH_IMPL picks one:
// BENCH_RESOURCE is configmaps (default) or pods.
//   tessera      @tessera/informers' SharedIndexInformer with one handler, as
//                an operator runs it (BENCH_WIRE json | protobuf, default
//                json as the reflector ships; BENCH_COMPRESSION gzip | none;
//                BENCH_COMPACT=1 for the compact cache, objects kept as JSON text,
//                BENCH_COMPACT=deflate for that text deflated)
//   client-node  @kubernetes/client-node's informer (makeInformer): LIST
//                through the generated client, then WATCH; JSON only, no
//                watch-list, no transform hook
//   limit        the limit: the same watch-list (or LIST) response read and
//                discarded, counting objects without decoding them (lines
//                of JSON, or protobuf frames; gzip inflated where asked for)
// Run by the harness (cold-sync.js, churn.js, fan-out.js) as
//   BENCH_IMPL=tessera KUBECONFIG=... BENCH_NAMESPACE=bench node bench/peers/node/informer.js
import { request } from "node:https";
import { createGunzip } from "node:zlib";
import { URLSearchParams } from "node:url";
import { CoreV1Api, KubeConfig, makeInformer } from "@kubernetes/client-node";
import { SharedIndexInformer, stripManagedFields } from "@tessera/informers";
import { ConfigMaps, Pods } from "@tessera/client";
import { KubeListerWatcher, ProtobufCodec } from "@tessera/reflector";
import { emit, exitOnSignal, highestResourceVersion, monotonicMicros, unsupported } from "./protocol.js";
import { cpuMs, liveHeapMiB, rssMiB } from "./proc-status.js";
import { startProfile } from "./profile.js";

const env = process.env;
const impl = env.BENCH_IMPL ?? "tessera";
const namespace = env.BENCH_NAMESPACE && env.BENCH_NAMESPACE !== "*" ? env.BENCH_NAMESPACE : undefined;
const watchList = env.BENCH_WATCH_LIST !== "0";
const events = env.BENCH_EVENTS === "1";
const strip = env.BENCH_STRIP_MANAGED_FIELDS === "1";
const labelSelector = env.BENCH_LABEL_SELECTOR || undefined;
const shardSelector = env.BENCH_SHARD_SELECTOR || undefined;
const resource = env.BENCH_RESOURCE ?? "configmaps";
if (resource !== "configmaps" && resource !== "pods")
  unsupported(`BENCH_RESOURCE "${resource}": configmaps or pods`);
const kc = new KubeConfig();
kc.loadFromDefault();
const collection = namespace ? `/api/v1/namespaces/${namespace}/${resource}` : `/api/v1/${resource}`;

/** Prints an `e` line for an object handed to a handler after the sync. */
let synced = false;
const onEvent = (/** @type {import("@tessera/client").KubeObject} */ obj) => {
  if (synced)
    emit({ ev: "e", n: obj.metadata?.name, rv: obj.metadata?.resourceVersion, t: monotonicMicros() });
};

/**
 * The protobuf decoder (descriptor and JSON shapes), built once per process and loaded with the
 * watched kind's messages before the clock starts, as Go registers its types at init (an
 * operator's informer factory loads them before its first request); its cost is in the start-up
 * benchmark (bench/runtime/startup.js).
 */
const codec = impl === "tessera" && env.BENCH_WIRE === "protobuf" ? new ProtobufCodec() : undefined;
if (codec) {
  const kind = resource === "pods" ? "Pod" : "ConfigMap";
  await codec.load("v1", [kind, `${kind}List`]);
}

/**
 * Tessera: a SharedIndexInformer over a KubeListerWatcher, one handler.
 * @returns {Promise<{ objects: () => import("@tessera/client").KubeObject[] }>}
 */
async function tessera() {
  const wire = env.BENCH_WIRE === "protobuf" ? "protobuf" : "json";
  const compression = env.BENCH_COMPRESSION === "gzip" ? "gzip" : "none";
  const informer = new SharedIndexInformer({
    listerWatcher: new KubeListerWatcher(
      kc,
      /** @type {typeof ConfigMaps} */ (resource === "pods" ? Pods : ConfigMaps),
      {
        ...(namespace ? { namespace } : {}),
        ...(labelSelector ? { labelSelector } : {}),
        ...(shardSelector ? { shardSelector } : {}),
        wire,
        compression,
        ...(codec ? { protobufCodec: codec } : {}),
        // As the runtime's informers do when they strip managedFields: the decoder leaves them out.
        stripManagedFields: strip,
      },
    ),
    ...(strip ? { transform: stripManagedFields } : {}),
    ...(env.BENCH_COMPACT === "1" ? { compact: true } : {}),
    ...(env.BENCH_COMPACT === "deflate" ? { compact: { encoding: "deflate" } } : {}),
    reflector: { watchList, consistencyCheck: false },
  });
  informer.addEventHandler({ onAdd: onEvent, onUpdate: (_old, obj) => onEvent(obj) });
  const stop = new AbortController();
  exitOnSignal(() => stop.abort());
  void informer.run(stop.signal);
  await informer.waitForSync();
  return { objects: () => informer.lister.list() };
}

/** @kubernetes/client-node's informer; `strip` deletes managedFields in its handlers (it has no transform). */
async function clientNode() {
  if (env.BENCH_WIRE === "protobuf") unsupported("@kubernetes/client-node speaks JSON only");
  if (watchList && env.BENCH_WATCH_LIST === "1")
    unsupported("@kubernetes/client-node's informer has no watch-list (sendInitialEvents)");
  if (shardSelector) unsupported("@kubernetes/client-node's informer cannot pass a shardSelector");
  const core = kc.makeApiClient(CoreV1Api);
  const list =
    resource === "pods"
      ? namespace
        ? () => core.listNamespacedPod({ namespace, labelSelector })
        : () => core.listPodForAllNamespaces({ labelSelector })
      : namespace
        ? () => core.listNamespacedConfigMap({ namespace, labelSelector })
        : () => core.listConfigMapForAllNamespaces({ labelSelector });
  const informer = makeInformer(kc, collection, list, labelSelector);
  const handle = (
    /** @type {import("@kubernetes/client-node").V1ConfigMap | import("@kubernetes/client-node").V1Pod} */ obj,
  ) => {
    if (strip && obj.metadata) delete obj.metadata.managedFields;
    onEvent(/** @type {import("@tessera/client").KubeObject} */ (obj));
  };
  informer.on("add", handle);
  informer.on("update", handle);
  exitOnSignal(() => void informer.stop());
  // start() resolves once the LIST is in the cache: client-node's "synced".
  await informer.start();
  return { objects: () => /** @type {import("@tessera/client").KubeObject[]} */ (informer.list()) };
}

/**
 * The limit: the initial state's bytes received and discarded, objects counted by their newlines
 * (watch-list) or items (LIST pages). With BENCH_EVENTS it keeps reading the watch and reports each
 * event's name and resourceVersion found by a plain search of the line, without decoding it.
 */
async function limit() {
  if (events && !watchList) unsupported("the limit follows events on its watch-list stream only");
  const wireOf = env.BENCH_WIRE === "protobuf" ? "protobuf" : "json";
  if (events && wireOf === "protobuf") unsupported("the limit follows events on a JSON stream only");
  if (wireOf === "protobuf" && !watchList)
    unsupported("the limit reads protobuf on its watch-list stream only");
  const query = new URLSearchParams(
    watchList
      ? {
          watch: "1",
          sendInitialEvents: "true",
          allowWatchBookmarks: "true",
          resourceVersionMatch: "NotOlderThan",
          resourceVersion: "",
          timeoutSeconds: "300",
        }
      : { limit: "500" },
  );
  if (labelSelector) query.set("labelSelector", labelSelector);
  if (shardSelector) query.set("shardSelector", shardSelector);
  /** @type {Record<string, string>} */
  const headers = {
    Accept:
      wireOf === "protobuf" ? "application/vnd.kubernetes.protobuf, application/json" : "application/json",
  };
  if (env.BENCH_COMPRESSION === "gzip") headers["Accept-Encoding"] = "gzip";
  const options = { method: "GET", headers };
  await kc.applyToHTTPSOptions(options);
  const server = kc.getCurrentCluster()?.server;
  let count = 0;
  if (!watchList) {
    // Pages of 500, as the informers list: each page read whole and its item count taken from the bytes.
    for (let cont = ""; ;) {
      if (cont) query.set("continue", cont);
      const body = await get(new URL(`${server}${collection}?${query}`), options);
      const page = JSON.parse(body.toString("utf8"));
      count += page.items.length;
      cont = page.metadata?.continue ?? "";
      if (!cont) return { objects: () => new Array(count) };
    }
  }
  const marker = Buffer.from("k8s.io/initial-events-end");
  let initialDone = false;
  let partial = "";
  /** Finds each whole line's name and resourceVersion by searching its text. */
  const follow = (/** @type {Buffer} */ chunk) => {
    const lines = (partial + chunk.toString("latin1")).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      const rv = /"resourceVersion":"(\d+)"/.exec(line)?.[1];
      const name = /"name":"([^"]+)"/.exec(line)?.[1];
      if (rv && name && !line.startsWith('{"type":"BOOKMARK"'))
        emit({ ev: "e", n: name, rv, t: monotonicMicros() });
    }
  };
  /** @type {Buffer} */
  let tail = Buffer.alloc(0);
  /** JSON lines: counts the newlines before the bookmark's marker; true once it is seen. */
  const jsonChunk = (/** @type {Buffer} */ chunk) => {
    if (initialDone) {
      follow(chunk);
      return false;
    }
    // The marker may straddle two chunks: look at the end of the last one too.
    const at = chunk.indexOf(marker);
    const straddles =
      at === -1 &&
      tail.length > 0 &&
      Buffer.concat([tail, chunk.subarray(0, marker.length)]).indexOf(marker) !== -1;
    const end = at === -1 ? chunk.length : at;
    for (let i = chunk.indexOf(10); i !== -1 && i < end; i = chunk.indexOf(10, i + 1)) count++;
    tail = chunk.subarray(Math.max(0, chunk.length - marker.length));
    if (at === -1 && !straddles) return false;
    initialDone = true;
    // The rest of this chunk, after the bookmark's line, is events already.
    const next = chunk.indexOf(10, at === -1 ? 0 : at);
    if (events && next !== -1) follow(chunk.subarray(next + 1));
    return true;
  };
  /** Protobuf frames (a 4-byte big-endian length, then the frame): counts frames up to the bookmark's. */
  /** @type {Buffer} */
  let pending = Buffer.alloc(0);
  const protobufChunk = (/** @type {Buffer} */ chunk) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    let at = 0;
    while (pending.length - at >= 4) {
      const size = pending.readUInt32BE(at);
      if (pending.length - at - 4 < size) break;
      const frame = pending.subarray(at + 4, at + 4 + size);
      at += 4 + size;
      if (frame.indexOf(marker) !== -1) return true;
      count++;
    }
    pending = pending.subarray(at);
    return false;
  };
  const consume = wireOf === "protobuf" ? protobufChunk : jsonChunk;
  await new Promise((resolve, reject) => {
    const req = request(new URL(`${server}${collection}?${query}`), options, (res) => {
      const body = res.headers["content-encoding"] === "gzip" ? res.pipe(createGunzip()) : res;
      body.on("data", (/** @type {Buffer} */ chunk) => {
        if (consume(chunk) && !resolved) {
          resolved = true;
          if (!events) req.destroy();
          resolve(undefined);
        }
      });
      body.on("error", () => {});
      // Following events, a watch the server ends is the end of this contender: say so, not exit quietly.
      body.on("end", () => {
        if (!events) return;
        process.stderr.write(`the watch ended (HTTP ${res.statusCode}) after ${count} initial objects\n`);
        process.exit(1);
      });
    });
    let resolved = false;
    req.on("error", (/** @type {NodeJS.ErrnoException} */ err) =>
      err.code === "ECONNRESET" ? undefined : reject(err),
    );
    req.end();
  });
  return { objects: () => new Array(count) };
}

/** One GET, its body whole. */
function get(url, options) {
  return new Promise((resolve, reject) => {
    request(url, options, (res) => {
      /** @type {Buffer[]} */
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () =>
        res.statusCode === 200
          ? resolve(Buffer.concat(chunks))
          : reject(new Error(`GET ${url.pathname}: HTTP ${res.statusCode}`)),
      );
      res.on("error", reject);
    })
      .on("error", reject)
      .end();
  });
}

const impls = { tessera, "client-node": clientNode, limit };
const run = impls[/** @type {keyof typeof impls} */ (impl)];
if (!run) unsupported(`unknown BENCH_IMPL "${impl}"; one of ${Object.keys(impls).join(", ")}`);
const baselineRssMiB = rssMiB("VmRSS");
const baselineHeapMiB = liveHeapMiB();
// BENCH_CPU_PROFILE=<file>: a V8 CPU profile of the timed span only (open it in Chrome's DevTools),
// started after the baseline's full collections, which are not the sync's.
const profiler = env.BENCH_CPU_PROFILE ? await startProfile() : undefined;
const cpu0 = cpuMs();
const t0 = performance.now();
const { objects } = await run();
const ms = performance.now() - t0;
const cpu = cpuMs() - cpu0;
// Counted in a scope of its own: a compact cache's list() decodes every object, which must not be
// held while the live heap is measured.
if (profiler) await profiler.stop(env.BENCH_CPU_PROFILE ?? "");
const { count, resourceVersion } = (() => {
  const cached = objects();
  return { count: cached.length, resourceVersion: impl === "limit" ? "" : highestResourceVersion(cached) };
})();
synced = true;
emit({
  ev: "synced",
  objects: count,
  resourceVersion,
  ms: Math.round(ms),
  cpuMs: Math.round(cpu),
  peakRssMiB: rssMiB("VmHWM"),
  baselineRssMiB,
  rssMiB: rssMiB("VmRSS"),
  heapMiB: liveHeapMiB(),
  baselineHeapMiB,
});
if (!events) process.exit(0);
