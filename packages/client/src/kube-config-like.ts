import type { KubeConfig } from "@kubernetes/client-node";

/**
 * What Tessera needs of a KubeConfig: the current cluster (its server URL)
 * and a way to authenticate a request to it. A @kubernetes/client-node
 * `KubeConfig` is one; so is the lean `loadKubeConfig()` of
 * @tessera/runtime, which does not load client-node's generated API models
 * unless an exec or auth-provider user needs client-node's code.
 */
export type KubeConfigLike = Pick<KubeConfig, "getCurrentCluster" | "applyToHTTPSOptions">;
