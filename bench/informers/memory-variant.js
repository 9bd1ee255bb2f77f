// One informer of one variant, in its own process with a fresh heap: syncs a
// namespace of ConfigMaps or Pods and prints one JSON line with the heap in
// use before starting and after the sync (both after full garbage
// collections):
//   {"variant", "kind", "objects", "heapBefore", "heapAfter", "rssAfter"}
// Run by memory.js: node --expose-gc memory-variant.js <variant> <configmaps|pods> <kubeconfig> <namespace> <expected>
import { CoreV1Api, KubeConfig, makeInformer } from "@kubernetes/client-node";
import { ConfigMaps, Pods } from "@tessera/client";
import { KubeListerWatcher } from "@tessera/reflector";
import { MetadataListerWatcher, SharedIndexInformer, stripManagedFields } from "@tessera/informers";

const [variant, kind, kubeconfigPath, namespace, expectedArg] = process.argv.slice(2);
const expected = Number(expectedArg);
const kc = new KubeConfig();
kc.loadFromFile(kubeconfigPath);
const RESOURCES = { configmaps: ConfigMaps, pods: Pods };
const resource = RESOURCES[kind];
if (!resource) throw new Error(`unknown kind ${kind}`);
if (typeof globalThis.gc !== "function") throw new Error("run with --expose-gc");

async function fullGc() {
  for (let i = 0; i < 4; i++) {
    globalThis.gc();
    await new Promise((r) => setImmediate(r));
  }
}

async function until(check) {
  while (!check()) await new Promise((r) => setTimeout(r, 10));
}

/** Tessera's SharedIndexInformer (namespace index, one no-op handler), as an operator runs it. */
async function tessera(options) {
  const listerWatcher = options.metadata
    ? new MetadataListerWatcher(kc, resource, { namespace })
    : new KubeListerWatcher(kc, resource, { namespace });
  const informer = new SharedIndexInformer({
    listerWatcher,
    ...(options.strip ? { transform: stripManagedFields } : {}),
    reflector: { consistencyCheck: false },
  });
  const handler = informer.addEventHandler({ onAdd: () => {} });
  const stop = new AbortController();
  const done = informer.run(stop.signal);
  await informer.waitForSync();
  await until(() => handler.pending === 0 && informer.lister.size >= expected);
  return { count: () => informer.lister.size, keep: informer, stop: () => (stop.abort(), done) };
}

/**
 * @kubernetes/client-node's informer (LIST through the generated client, then
 * WATCH). It has no transform hook; `strip` deletes managedFields from each
 * object in the add/update handlers, which see the cached object itself.
 */
async function clientNode(options) {
  const core = kc.makeApiClient(CoreV1Api);
  const list =
    kind === "pods"
      ? () => core.listNamespacedPod({ namespace })
      : () => core.listNamespacedConfigMap({ namespace });
  const informer = makeInformer(kc, `/api/v1/namespaces/${namespace}/${kind}`, list);
  const strip = (obj) => {
    if (obj.metadata) delete obj.metadata.managedFields;
  };
  if (options.strip) {
    informer.on("add", strip);
    informer.on("update", strip);
  } else {
    informer.on("add", () => {});
  }
  await informer.start();
  await until(() => informer.list().length >= expected);
  return { count: () => informer.list().length, keep: informer, stop: () => informer.stop() };
}

const variants = {
  tessera: () => tessera({}),
  "tessera-stripped": () => tessera({ strip: true }),
  "tessera-metadata": () => tessera({ metadata: true }),
  "tessera-metadata-stripped": () => tessera({ metadata: true, strip: true }),
  "client-node": () => clientNode({}),
  "client-node-stripped": () => clientNode({ strip: true }),
};
const run = variants[variant];
if (!run) throw new Error(`unknown variant ${variant}; one of ${Object.keys(variants).join(", ")}`);

await fullGc();
const heapBefore = process.memoryUsage().heapUsed;
const informer = await run();
// Let the watch settle (no more initial traffic), then measure what the cache holds.
await new Promise((r) => setTimeout(r, 500));
await fullGc();
const usage = process.memoryUsage();
const objects = informer.count();
console.log(
  JSON.stringify({
    variant,
    kind,
    objects,
    heapBefore,
    heapAfter: usage.heapUsed,
    rssAfter: usage.rss,
  }),
);
await informer.stop();
process.exit(0);
