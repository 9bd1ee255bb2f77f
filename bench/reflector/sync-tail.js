// Where a watch-list sync's time goes around its end bookmark, against a real apiserver: the time
// from the informer's construction to the bookmark (the stream), from the bookmark to synced (the
// tail: the store's replace and the informer's handling of what it queued), the event loop's idle
// time during the stream (how much of it waited for the network) and the client CPU. The same
// informer as bench/peers/node/informer.js (protobuf, managedFields left out, one handler); one
// process per run. The bookmark is taken as the DeltaFIFO's replace, which every informer sync
// makes (a staged first sync makes an empty one at the bookmark).
//
// Run (a control plane from bench/peers/serve.js, KUBECONFIG set):
//   bash scripts/with-node.sh node bench/reflector/sync-tail.js <ConfigMap|Pod> <namespace>
import { performance } from "node:perf_hooks";
import { KubeConfig } from "@kubernetes/client-node";
import { ConfigMaps, Pods } from "@tessera/client";
import { DeltaFIFO, KubeListerWatcher, ProtobufCodec } from "@tessera/reflector";
import { SharedIndexInformer, stripManagedFields } from "@tessera/informers";

const [kind = "ConfigMap", namespace = "bench"] = process.argv.slice(2);
const kc = new KubeConfig();
kc.loadFromDefault();
const codec = new ProtobufCodec();
await codec.load("v1", [kind, `${kind}List`]);

/** @type {{ bookmark?: number, replaced?: number, elu?: import("node:perf_hooks").EventLoopUtilization }} */
const marks = {};
const replace = DeltaFIFO.prototype.replace;
DeltaFIFO.prototype.replace = function (list, rv) {
  marks.bookmark = performance.now();
  marks.elu = performance.eventLoopUtilization(elu0);
  replace.call(this, list, rv);
  marks.replaced = performance.now();
};

const cpu0 = process.cpuUsage();
const elu0 = performance.eventLoopUtilization();
const t0 = performance.now();
const informer = new SharedIndexInformer({
  listerWatcher: new KubeListerWatcher(
    kc,
    /** @type {typeof ConfigMaps} */ (kind === "Pod" ? Pods : ConfigMaps),
    {
      namespace,
      wire: "protobuf",
      protobufCodec: codec,
      stripManagedFields: true,
    },
  ),
  transform: stripManagedFields,
  reflector: { watchList: true, consistencyCheck: false },
});
informer.addEventHandler({ onAdd: () => {} });
void informer.run(new AbortController().signal);
await informer.waitForSync();
const end = performance.now();
const cpu = process.cpuUsage(cpu0);
const ms = (/** @type {number} */ x) => Math.round(x);
console.log(
  JSON.stringify({
    objects: informer.lister.list().length,
    ms: ms(end - t0),
    bookmarkMs: ms((marks.bookmark ?? end) - t0),
    tailMs: ms(end - (marks.bookmark ?? end)),
    replaceMs: ms((marks.replaced ?? end) - (marks.bookmark ?? end)),
    streamIdleMs: ms(marks.elu?.idle ?? 0),
    cpuMs: ms((cpu.user + cpu.system) / 1000),
  }),
);
process.exit(0);
