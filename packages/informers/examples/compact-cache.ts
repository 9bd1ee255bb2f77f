import { KubeConfig } from "@kubernetes/client-node";
import { SharedIndexInformer } from "@tessera/informers";
import { KubeListerWatcher } from "@tessera/reflector";
import { Pods } from "@tessera/client";

const kc = new KubeConfig();
kc.loadFromDefault();
const pods = new SharedIndexInformer({
  listerWatcher: new KubeListerWatcher(kc, Pods, { wire: "protobuf" }),
  compact: { hotObjects: 512 },
});
pods.addEventHandler({ onAdd: (pod) => console.log("added", pod.metadata?.name) }); // an object, as ever
