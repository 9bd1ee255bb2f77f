import type { Logger } from "@tessera/core";
import type { KubeConfigLike } from "../kube-config-like.js";
import { KubeConfigError } from "./kubeconfig-error.js";

/** Where an insecure cluster was found, for the refusal and the warning. */
export interface InsecureClusterSource {
  /** The kubeconfig file (or `in-cluster`, or `a KubeConfig given in code`). */
  readonly kubeconfig: string;
  readonly context: string | undefined;
  readonly cluster: string;
}

/**
 * The error for a cluster with `insecure-skip-tls-verify: true` when that was
 * not allowed: it names where the setting is and both ways out.
 */
export function insecureTLSRefused(source: InsecureClusterSource): KubeConfigError {
  const context = source.context !== undefined ? `context ${JSON.stringify(source.context)}, ` : "";
  return new KubeConfigError(
    `kubeconfig ${source.kubeconfig}: ${context}cluster ${JSON.stringify(source.cluster)} sets ` +
      "insecure-skip-tls-verify: true, which turns off verification of the API server's certificate; refused. " +
      "Give the cluster its CA (certificate-authority or certificate-authority-data) instead, or, for a " +
      "development cluster only, allow it with the manager setting allowInsecureTLS: true " +
      "(env TESSERA_ALLOW_INSECURE_TLS=true, or loadKubeConfig({ allowInsecureTLS: true }))",
  );
}

/**
 * Refuses a KubeConfig whose current cluster skips TLS verification unless
 * `allow`, and when allowed logs one warning (a manager calls it once, so
 * every client it makes shares that one line). Returns whether TLS
 * verification is off.
 */
export function checkInsecureTLS(
  kubeConfig: KubeConfigLike & { readonly source?: string },
  allow: boolean,
  logger: Logger,
): boolean {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster?.skipTLSVerify) return false;
  const kubeconfig = kubeConfig.source ?? "a KubeConfig given in code";
  if (!allow) throw insecureTLSRefused({ kubeconfig, context: undefined, cluster: cluster.name });
  logger.warn("TLS verification of the API server is off (insecure-skip-tls-verify, allowInsecureTLS)", {
    kubeconfig,
    cluster: cluster.name,
    server: cluster.server,
  });
  return true;
}
