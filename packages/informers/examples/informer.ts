import { KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "@tessera/core";
import { indexByLabel, SharedIndexInformer } from "@tessera/informers";
import { KubeListerWatcher } from "@tessera/reflector";
import { Pods } from "@tessera/client";

const kc = new KubeConfig();
kc.loadFromDefault();
const logger: Logger = {
  debug: () => {},
  info: (message, fields) => console.info(message, fields),
  warn: (message, fields) => console.warn(message, fields),
  error: (message, fields) => console.error(message, fields),
};

// A SharedIndexInformer<V1Pod>, as the lister-watcher over the Pods handle says.
const pods = new SharedIndexInformer({
  listerWatcher: new KubeListerWatcher(kc, Pods),
  indexers: { app: indexByLabel("app") },
  logger,
});
const phases = pods.addEventHandler({
  onUpdate: (old, pod) => {
    if (old.status?.phase !== pod.status?.phase) console.log(pod.metadata?.name, "is now", pod.status?.phase);
  },
});

const stop = new AbortController();
const running = pods.run(stop.signal);
// true once the cache is complete and the handler has seen every pod; false after a minute without.
if (await phases.waitForSync(AbortSignal.timeout(60_000))) {
  for (const pod of pods.lister.byIndex("app", "web")) {
    console.log(pod.metadata?.namespace, pod.metadata?.name);
  }
}
stop.abort(); // the informer stops; its cache is kept until it is let go of
await running;
