import { KubeConfig, type V1ConfigMap } from "@kubernetes/client-node";
import {
  DeletedFinalStateUnknown,
  DeltaFIFO,
  IndexedStore,
  KubeListerWatcher,
  Reflector,
  type DeltaBatch,
} from "@tessera/reflector";
import { ConfigMaps } from "@tessera/client";

const kc = new KubeConfig();
kc.loadFromDefault();

// An informer's plumbing: the reflector queues changes per key, the loop applies them to the cache.
const cache = new IndexedStore<V1ConfigMap>();
const fifo = new DeltaFIFO<V1ConfigMap>({ knownObjects: cache });
const reflector = new Reflector({ listerWatcher: new KubeListerWatcher(kc, ConfigMaps), store: fifo });

/** Applies one key's changes to the cache (an informer would notify its handlers here too). */
function apply(batch: DeltaBatch<V1ConfigMap>): void {
  for (const delta of batch.deltas) {
    if (delta.type === "Deleted" || delta.object instanceof DeletedFinalStateUnknown)
      cache.delete(delta.object);
    else cache.update(delta.object);
  }
}

const stop = new AbortController();
process.once("SIGTERM", () => stop.abort());
const running = reflector.run(stop.signal);
while (await fifo.pop(apply, stop.signal)) {
  // fifo.hasSynced(): the first snapshot was fully applied to the cache.
}
fifo.close();
await running;
