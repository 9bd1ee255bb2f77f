import { KubeConfig } from "@kubernetes/client-node";

/** A copy of `kc` whose current cluster's server is `server` (for example a {@link FaultProxy} url). */
export function kubeConfigVia(kc: KubeConfig, server: string): KubeConfig {
  const copy = new KubeConfig();
  copy.loadFromString(kc.exportConfig());
  const name = copy.getCurrentCluster()?.name;
  copy.clusters = copy.clusters.map((c) => (c.name === name ? { ...c, server } : c));
  return copy;
}
