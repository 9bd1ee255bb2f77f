import { AppsV1Api } from "@kubernetes/client-node";
import { eventually, markPodsReady, useControlPlane } from "@tessera/testenv";

describe("my operator's Deployment", function () {
  const env = useControlPlane({ controllerManager: true });

  it("becomes Available", async () => {
    const apps = env.cp.kubeConfig.makeApiClient(AppsV1Api);
    // ... the operator creates Deployment "web" in namespace "default" ...
    // No kubelet runs: play it, marking the Pods Running and Ready.
    await eventually("pods marked ready", async () => (await markPodsReady(env.cp, "default")).length > 0);
    await eventually("Available", async () => {
      const d = await apps.readNamespacedDeployment({ namespace: "default", name: "web" });
      return d.status?.conditions?.some((c) => c.type === "Available" && c.status === "True") ?? false;
    });
  });
});
