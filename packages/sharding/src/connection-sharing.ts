import { KubeConfig, type RequestContext } from "@kubernetes/client-node";

type Dispatcher = NonNullable<ReturnType<RequestContext["getDispatcher"]>>;

/**
 * A copy of `kubeConfig` whose API clients share one connection pool per
 * cluster and user.
 *
 * @kubernetes/client-node 2.0 builds a new undici Agent for every request
 * (in `applySecurityAuthentication`), so every call opens a new TCP and TLS
 * connection and leaves the old one idle: about 50 ms per request on a
 * 2-core machine, and enough load to make short lease deadlines slip. The
 * copy runs the original authentication (headers, exec plugins, TLS
 * options) and then swaps in the first dispatcher it built for that
 * cluster and user. TLS material is taken from the first request: a client
 * certificate rotated on disk is picked up by a new copy, not by this one.
 */
export function shareConnections(kubeConfig: KubeConfig): KubeConfig {
  if (kubeConfig instanceof ConnectionSharingKubeConfig) return kubeConfig;
  const copy = new ConnectionSharingKubeConfig();
  copy.clusters = kubeConfig.clusters;
  copy.users = kubeConfig.users;
  copy.contexts = kubeConfig.contexts;
  copy.currentContext = kubeConfig.currentContext;
  return copy;
}

class ConnectionSharingKubeConfig extends KubeConfig {
  private readonly dispatchers = new Map<string, Dispatcher>();

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    const built = context.getDispatcher();
    if (!built) return;
    const key = JSON.stringify([this.getCurrentCluster()?.name, this.getCurrentUser()?.name]);
    const shared = this.dispatchers.get(key);
    if (shared) {
      context.setDispatcher(shared);
      void built.close().catch(() => undefined);
    } else {
      this.dispatchers.set(key, built);
    }
  }
}
