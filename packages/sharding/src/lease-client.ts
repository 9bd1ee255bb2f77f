import type { V1Lease } from "@kubernetes/client-node";
import type { Meter } from "@opentelemetry/api";
import {
  collectionPath,
  describeResource,
  isNotFound,
  KubeTransport,
  Leases,
  type ApiErrorContext,
  type KubeConfigLike,
  type TransportRequest,
} from "@tessera/client";

/**
 * The Leases of one namespace, as membership uses them. {@link KubernetesLeaseClient}
 * is the real one; unit tests give an in-memory one. Every failure is an
 * `ApiError` of `@tessera/client` naming the verb and the Lease (a
 * `TransportError`, code 0, when no answer came).
 */
export interface LeaseClient {
  /** The namespace the Leases live in. */
  readonly namespace: string;
  /** The Lease named `name`; `undefined` when there is none. */
  get(name: string): Promise<V1Lease | undefined>;
  /** Creates `lease`; an `AlreadyExistsError` (409) when it exists. */
  create(lease: V1Lease): Promise<V1Lease>;
  /** Replaces `lease`, quoting its `metadata.resourceVersion`; a `ConflictError` (409) when that is stale. */
  replace(lease: V1Lease): Promise<V1Lease>;
  /** The Leases matching a label selector such as `sharding.tessera.dev/ring=web`. */
  list(labelSelector: string): Promise<V1Lease[]>;
  /**
   * Deletes the Lease `name` if it is still at `resourceVersion` (a
   * precondition: a `ConflictError` when it changed since); resolves when it
   * is gone, also when it was gone already.
   */
  delete(name: string, resourceVersion: string): Promise<void>;
}

/** Options of a {@link KubernetesLeaseClient}. */
export interface KubernetesLeaseClientOptions {
  /**
   * The transport to send through; default one of its own over the
   * KubeConfig with a pool of four kept-alive connections (a member renews
   * every retry period: a TLS handshake each time would eat its deadline).
   */
  transport?: KubeTransport;
  /** Where the default transport records its request metrics (`rest_client_*`); default the global meter. */
  meter?: Meter;
}

/** {@link LeaseClient} over `coordination.k8s.io/v1`, through a {@link KubeTransport}. */
export class KubernetesLeaseClient implements LeaseClient {
  private readonly path: string;
  private readonly transport: KubeTransport;

  constructor(
    kubeConfig: KubeConfigLike,
    readonly namespace: string,
    options: KubernetesLeaseClientOptions = {},
  ) {
    this.path = collectionPath(Leases, namespace);
    this.transport =
      options.transport ??
      new KubeTransport(kubeConfig, { maxSockets: 4, ...(options.meter ? { meter: options.meter } : {}) });
  }

  async get(name: string): Promise<V1Lease | undefined> {
    try {
      return await this.call<V1Lease>("get", name, { method: "GET", path: this.objectPath(name) });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  create(lease: V1Lease): Promise<V1Lease> {
    return this.call<V1Lease>("create", lease.metadata?.name ?? "", {
      method: "POST",
      path: this.path,
      body: lease,
    });
  }

  replace(lease: V1Lease): Promise<V1Lease> {
    const name = lease.metadata?.name ?? "";
    return this.call<V1Lease>("update", name, { method: "PUT", path: this.objectPath(name), body: lease });
  }

  async list(labelSelector: string): Promise<V1Lease[]> {
    const list = await this.call<{ items?: V1Lease[] }>(`list (selector ${labelSelector})`, undefined, {
      method: "GET",
      path: this.path,
      query: new URLSearchParams({ labelSelector }),
    });
    return list.items ?? [];
  }

  async delete(name: string, resourceVersion: string): Promise<void> {
    try {
      await this.call<unknown>("delete", name, {
        method: "DELETE",
        path: this.objectPath(name),
        body: { apiVersion: "v1", kind: "DeleteOptions", preconditions: { resourceVersion } },
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  private objectPath(name: string): string {
    return `${this.path}/${encodeURIComponent(name)}`;
  }

  private call<T>(verb: string, name: string | undefined, request: TransportRequest): Promise<T> {
    const context: ApiErrorContext = {
      verb,
      resource: describeResource(Leases),
      namespace: this.namespace,
      name,
    };
    return this.transport.call<T>(context, request);
  }
}
