import { homedir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import type { KubeConfigLike } from "../kube-config-like.js";
import { parseYaml } from "../parse-yaml.js";
import { LeanKubeConfig, type LeanCredentials } from "./lean-kube-config.js";
import { KubeConfigError } from "./kubeconfig-error.js";
import { insecureTLSRefused } from "./insecure-tls.js";
import { nodeFs } from "@tessera/core";

export { KubeConfigError };

/** Where {@link loadKubeConfig} looks; every field has the real default. */
export interface LoadKubeConfigOptions {
  /** A kubeconfig file to use; wins over everything else. */
  file?: string;
  /** Default `process.env` (`KUBECONFIG`, `KUBERNETES_SERVICE_HOST`, `KUBERNETES_SERVICE_PORT`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** The service account's directory; default `/var/run/secrets/kubernetes.io/serviceaccount`. */
  serviceAccountDir?: string;
  /** Default the user's home directory (for `~/.kube/config`). */
  home?: string;
  /**
   * Accept a cluster with `insecure-skip-tls-verify: true`; refused with a
   * {@link KubeConfigError} otherwise. Default: `TESSERA_ALLOW_INSECURE_TLS`
   * of `env` is `true`.
   */
  allowInsecureTLS?: boolean;
}

const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/** A KubeConfig with its namespace, if its context or pod names one. */
export type LoadedKubeConfig = KubeConfigLike & {
  readonly namespace?: string | undefined;
  readonly source: string;
};

/**
 * The cluster to talk to, found as controller-runtime finds it: `file`, else
 * `KUBECONFIG`, else the in-cluster service account (token, `ca.crt`,
 * `namespace`, `KUBERNETES_SERVICE_HOST`/`_PORT`), else `~/.kube/config`.
 *
 * Token, token-file, client-certificate and basic-auth users are served by a
 * {@link LeanKubeConfig}, which does not load @kubernetes/client-node. Users
 * with an `exec` or `auth-provider` plugin, a proxy, or several files in
 * `KUBECONFIG` get client-node's own `KubeConfig`, imported on demand, so
 * every route client-node supports keeps working.
 */
export async function loadKubeConfig(options: LoadKubeConfigOptions = {}): Promise<LoadedKubeConfig> {
  const env = options.env ?? process.env;
  const allowInsecure = options.allowInsecureTLS ?? env["TESSERA_ALLOW_INSECURE_TLS"]?.trim() === "true";
  const explicit = options.file ?? env["KUBECONFIG"];
  if (explicit !== undefined && explicit !== "") {
    const files = explicit.split(":").filter((f) => f !== "");
    if (files.length > 1) return viaClientNode(explicit, files, allowInsecure);
    return fromFile(files[0]!, allowInsecure);
  }
  const saDir = options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  const host = env["KUBERNETES_SERVICE_HOST"];
  const port = env["KUBERNETES_SERVICE_PORT"];
  if (host && port && nodeFs.existsSync(join(saDir, "token"))) {
    const namespaceFile = join(saDir, "namespace");
    const namespace = nodeFs.existsSync(namespaceFile)
      ? nodeFs.readFileSync(namespaceFile, "utf8").trim()
      : undefined;
    return new LeanKubeConfig(
      {
        name: "in-cluster",
        server: `https://${host.includes(":") ? `[${host}]` : host}:${port}`,
        skipTLSVerify: false,
        caFile: join(saDir, "ca.crt"),
      },
      { tokenFile: join(saDir, "token") },
      namespace,
      "in-cluster",
    );
  }
  const home = join(options.home ?? homedir(), ".kube", "config");
  if (nodeFs.existsSync(home)) return fromFile(home, allowInsecure);
  throw new KubeConfigError(
    "no Kubernetes cluster configured: set KUBECONFIG (or the manager's kubeconfig setting) to a kubeconfig file, " +
      `run in a pod with a service account (${saDir}), or create ${home}`,
  );
}

interface NamedEntry<T> {
  name: string;
  [key: string]: unknown;
  cluster?: T;
  user?: T;
  context?: T;
}
type Fields = Record<string, unknown>;

async function fromFile(file: string, allowInsecure: boolean): Promise<LoadedKubeConfig> {
  let doc: Fields;
  try {
    doc = (parseYaml(nodeFs.readFileSync(file, "utf8")) ?? {}) as Fields;
  } catch (error) {
    // The first line only, and no `cause`: a YAML error quotes the lines around it, and those hold credentials.
    throw new KubeConfigError(
      `kubeconfig ${file}: cannot read it: ${(error as Error).message.split("\n")[0]}`,
    );
  }
  const contextName = doc["current-context"];
  const find = (list: string, name: unknown, key: "cluster" | "user" | "context"): Fields | undefined =>
    ((doc[list] as NamedEntry<Fields>[] | undefined) ?? []).find((e) => e.name === name)?.[key];
  const context = find("contexts", contextName, "context");
  if (!context) {
    throw new KubeConfigError(
      `kubeconfig ${file}: current-context ${JSON.stringify(contextName)} is not among its contexts; ` +
        "set current-context (kubectl config use-context <name>)",
    );
  }
  const cluster = find("clusters", context["cluster"], "cluster");
  if (!cluster || typeof cluster["server"] !== "string") {
    throw new KubeConfigError(
      `kubeconfig ${file}: context ${String(contextName)} names no cluster with a server`,
    );
  }
  const skipTLSVerify = cluster["insecure-skip-tls-verify"] === true;
  if (skipTLSVerify && !allowInsecure) {
    throw insecureTLSRefused({
      kubeconfig: file,
      context: String(contextName),
      cluster: String(context["cluster"]),
    });
  }
  const user = find("users", context["user"], "user") ?? {};
  if (
    user["exec"] !== undefined ||
    user["auth-provider"] !== undefined ||
    cluster["proxy-url"] !== undefined
  ) {
    return viaClientNode(file, [file], allowInsecure);
  }
  const dir = dirname(file);
  const path = (value: unknown) =>
    typeof value === "string" ? (isAbsolute(value) ? value : join(dir, value)) : undefined;
  const str = (value: unknown) => (typeof value === "string" ? value : undefined);
  const credentials: LeanCredentials = {};
  const token = str(user["token"]);
  const tokenFile = path(user["tokenFile"]);
  const certData = str(user["client-certificate-data"]);
  const certFile = path(user["client-certificate"]);
  const keyData = str(user["client-key-data"]);
  const keyFile = path(user["client-key"]);
  if (token !== undefined) credentials.token = token;
  if (tokenFile !== undefined) credentials.tokenFile = tokenFile;
  if (certData !== undefined) credentials.clientCertificate = Buffer.from(certData, "base64");
  else if (certFile !== undefined) credentials.clientCertificate = nodeFs.readFileSync(certFile);
  if (keyData !== undefined) credentials.clientKey = Buffer.from(keyData, "base64");
  else if (keyFile !== undefined) credentials.clientKey = nodeFs.readFileSync(keyFile);
  const username = str(user["username"]);
  const password = str(user["password"]);
  if (username !== undefined) credentials.username = username;
  if (password !== undefined) credentials.password = password;
  const caData = str(cluster["certificate-authority-data"]);
  const caFile = path(cluster["certificate-authority"]);
  const tlsServerName = str(cluster["tls-server-name"]);
  return new LeanKubeConfig(
    {
      name: String(context["cluster"]),
      server: cluster["server"],
      skipTLSVerify,
      ...(caData !== undefined ? { caData } : {}),
      ...(caData === undefined && caFile !== undefined ? { caFile } : {}),
      ...(tlsServerName !== undefined ? { tlsServerName } : {}),
    },
    credentials,
    str(context["namespace"]),
    file,
  );
}

/** client-node's KubeConfig for what the lean one does not do (exec and auth-provider plugins, proxies, merged files). */
async function viaClientNode(
  source: string,
  files: string[],
  allowInsecure: boolean,
): Promise<LoadedKubeConfig> {
  const { KubeConfig } = await import("@kubernetes/client-node");
  const kc = new KubeConfig();
  if (files.length === 1) kc.loadFromFile(files[0]!);
  else kc.loadFromDefault(); // merges the KUBECONFIG list as kubectl does
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new KubeConfigError(`kubeconfig ${source}: no current cluster`);
  if (cluster.skipTLSVerify && !allowInsecure) {
    throw insecureTLSRefused({ kubeconfig: source, context: kc.getCurrentContext(), cluster: cluster.name });
  }
  const namespace = kc.getContextObject(kc.getCurrentContext())?.namespace;
  return Object.assign(kc, { namespace, source });
}
