import { KubeConfig, type V1ConfigMap } from "@kubernetes/client-node";
import { IndexedStore, KubeListerWatcher, Reflector } from "@tessera/reflector";
import { ConfigMaps } from "@tessera/client";

const kc = new KubeConfig();
kc.loadFromDefault();

// The ConfigMaps handle types the lister-watcher: a KubeListerWatcher<V1ConfigMap>.
const listerWatcher = new KubeListerWatcher(kc, ConfigMaps, {
  namespace: "default",
  labelSelector: "app=web",
});
const store = new IndexedStore<V1ConfigMap>();
const reflector = new Reflector({
  listerWatcher,
  store,
  transform: (cm) => ({ ...cm, metadata: { ...cm.metadata, managedFields: undefined } }),
});

const stop = new AbortController();
process.once("SIGTERM", () => stop.abort());
const running = reflector.run(stop.signal); // settles once stopped
if (await reflector.waitForSync(stop.signal)) {
  console.log(store.size, store.getByKey("default/my-config")?.data);
}
await running;
