import { CoreV1Api } from "@kubernetes/client-node";
import { useControlPlane, FaultProxy, kubeConfigVia } from "@tessera/testenv";

describe("my controller", function () {
  const env = useControlPlane({ featureGates: { WatchList: false } });

  it("lists", async () => {
    const core = env.cp.kubeConfig.makeApiClient(CoreV1Api);
    await core.listNamespacedConfigMap({ namespace: "default" });
  });

  it("survives a cut", async () => {
    const proxy = new FaultProxy(env.cp.apiserverPort);
    await proxy.start();
    const core = kubeConfigVia(env.cp.kubeConfig, proxy.url).makeApiClient(CoreV1Api);
    await core.listNamespacedConfigMap({ namespace: "default" }); // through the proxy
    proxy.cutAll(); // open connections are cut; the client reconnects
    await core.listNamespacedConfigMap({ namespace: "default" });
    await proxy.stop();
  });
});
