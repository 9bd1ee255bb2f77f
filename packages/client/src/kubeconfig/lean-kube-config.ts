import type { RequestOptions } from "node:https";
import { nodeFs } from "@tessera/core";

/** The cluster of a {@link LeanKubeConfig}, shaped as client-node's `Cluster`. */
export interface LeanCluster {
  readonly name: string;
  readonly server: string;
  readonly skipTLSVerify: boolean;
  readonly caData?: string;
  caFile?: string;
  readonly tlsServerName?: string;
}

/** How a {@link LeanKubeConfig} authenticates: what it handles without client-node. */
export interface LeanCredentials {
  /** A bearer token. */
  token?: string;
  /** A file holding the bearer token, re-read when it may have rotated (the projected service-account token). */
  tokenFile?: string;
  /** PEM client certificate and key. */
  clientCertificate?: string | Buffer;
  clientKey?: string | Buffer;
  username?: string;
  password?: string;
}

/** How often a token file is re-read: client-go's cached token source reads it every minute. */
const TOKEN_FILE_TTL_MS = 60_000;

/**
 * A KubeConfig for the common routes (a bearer token or token file, client
 * certificates, basic auth, the cluster's CA, insecure-skip-tls-verify,
 * tls-server-name), in a few lines of plain TLS options: it implements what
 * Tessera needs of client-node's `KubeConfig` (`KubeConfigLike`) without
 * loading client-node, whose config module imports every generated API
 * model (about 0.9 s and 88 MiB here). `loadKubeConfig` makes one, or
 * falls back to client-node for exec and auth-provider users.
 */
export class LeanKubeConfig {
  // ECMAScript-private, so neither JSON.stringify nor util.inspect of a logged KubeConfig shows a credential.
  #token: { value: string; readAt: number } | undefined;
  readonly #credentials: LeanCredentials;

  constructor(
    private readonly cluster: LeanCluster,
    credentials: LeanCredentials,
    /** The namespace of the current context (the pod's, in a cluster), if any. */
    readonly namespace: string | undefined,
    /** Where it was loaded from, for logs: a file path or `in-cluster`. */
    readonly source: string,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.#credentials = credentials;
  }

  getCurrentCluster(): LeanCluster {
    return this.cluster;
  }

  /** Adds the CA, TLS settings and credentials to `opts` (node's https options), as client-node's does. */
  async applyToHTTPSOptions(opts: RequestOptions): Promise<void> {
    const c = this.cluster;
    if (c.caData !== undefined) opts.ca = Buffer.from(c.caData, "base64");
    else if (c.caFile !== undefined) opts.ca = nodeFs.readFileSync(c.caFile);
    if (c.skipTLSVerify) opts.rejectUnauthorized = false;
    if (c.tlsServerName) opts.servername = c.tlsServerName;
    const { clientCertificate, clientKey, username, password } = this.#credentials;
    if (clientCertificate !== undefined) opts.cert = clientCertificate;
    if (clientKey !== undefined) opts.key = clientKey;
    const headers = (opts.headers ??= {}) as Record<string, string>;
    const token = this.bearerToken();
    if (token !== undefined) headers["Authorization"] = `Bearer ${token}`;
    else if (username !== undefined) {
      headers["Authorization"] = `Basic ${Buffer.from(`${username}:${password ?? ""}`).toString("base64")}`;
    }
    return Promise.resolve();
  }

  private bearerToken(): string | undefined {
    const { token, tokenFile } = this.#credentials;
    if (token !== undefined) return token;
    if (tokenFile === undefined) return undefined;
    const now = this.now();
    if (this.#token === undefined || now - this.#token.readAt >= TOKEN_FILE_TTL_MS) {
      this.#token = { value: nodeFs.readFileSync(tokenFile, "utf8").trim(), readAt: now };
    }
    return this.#token.value;
  }
}
