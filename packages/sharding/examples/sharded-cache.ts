import { KubeConfig, type V1ConfigMap } from "@kubernetes/client-node";
import { IndexedStore, KubeListerWatcher } from "@tessera/reflector";
import { ConfigMaps } from "@tessera/client";
import { ShardedReflector, ShardMember } from "@tessera/sharding";
import { SlotSpace } from "@tessera/sharding/ranges";

const kubeConfig = new KubeConfig();
kubeConfig.loadFromDefault();
const identity = process.env.POD_NAME ?? "widgets-0";
const space = new SlotSpace(256);

// One reflector per owned range, all writing into one store: a cache here, an informer's queue in an operator.
const cache = new IndexedStore<V1ConfigMap>();
const sharded = new ShardedReflector<V1ConfigMap>({
  listerWatcher: new KubeListerWatcher(kubeConfig, ConfigMaps, { namespace: "apps" }),
  store: cache,
  ring: "widgets",
  member: identity,
});
const member = new ShardMember({
  kubeConfig,
  namespace: "operators",
  ring: "widgets",
  identity,
  // Lost ranges are stopped and their objects evicted before this resolves; then the epoch is acknowledged.
  onAssignment: ({ active }) => sharded.setSlots(active, space),
});

const shutdown = new AbortController();
process.once("SIGTERM", () => shutdown.abort());
const running = Promise.all([sharded.run(shutdown.signal), member.run(shutdown.signal)]);
if ((await member.joined()) && (await sharded.waitForSync(shutdown.signal))) {
  console.log(`${identity} caches ${cache.size} ConfigMaps from ${sharded.rangeCount} ranges`);
}
await running;
