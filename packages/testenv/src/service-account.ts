import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ControlPlane } from "./control-plane.js";

/** What {@link writeServiceAccount} creates. */
export interface ServiceAccountOptions {
  /** The ServiceAccount's namespace; default `default`. */
  readonly namespace?: string;
  /** The ServiceAccount's name; default `operator`. */
  readonly name?: string;
  /** The ClusterRole bound to it (a ClusterRoleBinding named `<name>-<role>`); default `cluster-admin`. */
  readonly clusterRole?: string;
  /** The token's lifetime; default 3600 s. */
  readonly expirationSeconds?: number;
}

/** The credentials {@link writeServiceAccount} wrote, and how a process reaches the apiserver with them. */
export interface ServiceAccountCredentials {
  /** The directory holding `token`, `ca.crt` and `namespace`. */
  readonly dir: string;
  /** The bound token. */
  readonly token: string;
  /** `KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT` for the apiserver, as in a Pod. */
  readonly env: { readonly KUBERNETES_SERVICE_HOST: string; readonly KUBERNETES_SERVICE_PORT: string };
}

/**
 * A ServiceAccount's credentials written as the kubelet mounts them in a Pod
 * (`token`, `ca.crt`, `namespace` in `dir`): what an operator reads on the
 * in-cluster path, with `env` set and the directory at
 * `/var/run/secrets/kubernetes.io/serviceaccount` (a container's mount, or
 * the path itself). Creates the ServiceAccount, binds it to a ClusterRole
 * and requests a bound token (TokenRequest). The directory and files are
 * readable by every user, so a container's non-root user reads them.
 *
 * ```ts
 * const account = await writeServiceAccount(cp, join(work, "serviceaccount"));
 * // podman run -v ${account.dir}:/var/run/secrets/kubernetes.io/serviceaccount:ro
 * //   -e KUBERNETES_SERVICE_HOST=${account.env.KUBERNETES_SERVICE_HOST} ...
 * ```
 */
export async function writeServiceAccount(
  cp: ControlPlane,
  dir: string,
  options: ServiceAccountOptions = {},
): Promise<ServiceAccountCredentials> {
  const namespace = options.namespace ?? "default";
  const name = options.name ?? "operator";
  const role = options.clusterRole ?? "cluster-admin";
  const post = async (path: string, body: unknown): Promise<unknown> => {
    const res = await cp.raw(path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    if (res.status >= 300)
      throw new Error(`writeServiceAccount: POST ${path}: HTTP ${res.status}: ${res.body}`);
    return JSON.parse(res.body);
  };
  await post(`/api/v1/namespaces/${namespace}/serviceaccounts`, { metadata: { name } });
  await post("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
    metadata: { name: `${name}-${role}` },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
    subjects: [{ kind: "ServiceAccount", name, namespace }],
  });
  const review = (await post(`/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenRequest",
    spec: { expirationSeconds: options.expirationSeconds ?? 3600 },
  })) as { status: { token: string } };
  const token = review.status.token;
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  writeFileSync(join(dir, "token"), token, { mode: 0o644 });
  writeFileSync(join(dir, "ca.crt"), cp.caPem, { mode: 0o644 });
  writeFileSync(join(dir, "namespace"), namespace, { mode: 0o644 });
  const url = new URL(cp.apiserverUrl);
  return {
    dir,
    token,
    env: { KUBERNETES_SERVICE_HOST: url.hostname, KUBERNETES_SERVICE_PORT: url.port },
  };
}
