import { KubeConfig } from "@kubernetes/client-node";
import { SharedInformerFactory, stripManagedFields } from "@tessera/informers";
import { ConfigMaps, Secrets } from "@tessera/client";

const kc = new KubeConfig();
kc.loadFromDefault();
const factory = new SharedInformerFactory({ kubeConfig: kc, transform: stripManagedFields });

// A SharedIndexInformer<V1ConfigMap>: the handle says what the objects are.
const settings = factory.informerFor(ConfigMaps, { namespace: "default" });
settings.addEventHandler(
  {
    onAdd: (cm) => console.log("added", cm.metadata?.name),
    onUpdate: (_old, cm) => console.log("updated", cm.metadata?.name),
    onDelete: (cm) => console.log("deleted", "key" in cm ? cm.key : cm.metadata?.name),
  },
  { name: "printer", resyncPeriodMs: 10 * 60_000 },
);
// Only the metadata of Secrets (names, labels, owners), never their data:
const secretNames = factory.metadataInformerFor(Secrets);

const stop = new AbortController();
process.once("SIGTERM", () => stop.abort());
const running = factory.run(stop.signal); // runs every informer, and those made later
// Rejects with a CacheSyncError naming what has not synced, and why, after a minute
// (`await factory.waitForSync(signal)` answers true or false instead).
await factory.requireSync(stop.signal, 60_000);
console.log(settings.lister.namespace("default").list({ app: "web" }).length, secretNames.lister.size);
await running; // after SIGTERM, once every informer has stopped
