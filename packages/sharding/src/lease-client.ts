import { ApiException, CoordinationV1Api, type KubeConfig, type V1Lease } from "@kubernetes/client-node";
import { shareConnections } from "./connection-sharing.js";

/** The Lease operations membership needs. */
export type LeaseVerb = "get" | "create" | "update" | "list";

/** A failed Lease operation: names the verb and the Lease, keeps the HTTP status and the cause. */
export class LeaseError extends Error {
  override name = "LeaseError";
  constructor(
    readonly verb: LeaseVerb,
    readonly resource: string,
    detail: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(`cannot ${verb} ${resource}: ${detail}`, options);
  }

  /** Another writer changed the Lease since it was read (HTTP 409). */
  get isConflict(): boolean {
    return this.status === 409;
  }
}

/**
 * The Leases of one namespace, as membership uses them. {@link KubernetesLeaseClient}
 * is the real one; unit tests give an in-memory one.
 */
export interface LeaseClient {
  /** The namespace the Leases live in. */
  readonly namespace: string;
  /** The Lease named `name`; `undefined` when there is none. */
  get(name: string): Promise<V1Lease | undefined>;
  /** Creates `lease`; a {@link LeaseError} with status 409 when it exists. */
  create(lease: V1Lease): Promise<V1Lease>;
  /** Replaces `lease`, quoting its `metadata.resourceVersion`; 409 when that is stale. */
  replace(lease: V1Lease): Promise<V1Lease>;
  /** The Leases matching a label selector such as `sharding.tessera.dev/ring=web`. */
  list(labelSelector: string): Promise<V1Lease[]>;
}

/** {@link LeaseClient} over `coordination.k8s.io/v1` with @kubernetes/client-node. */
export class KubernetesLeaseClient implements LeaseClient {
  private readonly api: CoordinationV1Api;

  constructor(
    kubeConfig: KubeConfig,
    readonly namespace: string,
  ) {
    this.api = shareConnections(kubeConfig).makeApiClient(CoordinationV1Api);
  }

  async get(name: string): Promise<V1Lease | undefined> {
    try {
      return await this.api.readNamespacedLease({ name, namespace: this.namespace });
    } catch (err) {
      if (err instanceof ApiException && err.code === 404) return undefined;
      throw this.failure("get", name, err);
    }
  }

  async create(lease: V1Lease): Promise<V1Lease> {
    try {
      return await this.api.createNamespacedLease({ namespace: this.namespace, body: lease });
    } catch (err) {
      throw this.failure("create", lease.metadata?.name ?? "", err);
    }
  }

  async replace(lease: V1Lease): Promise<V1Lease> {
    const name = lease.metadata?.name ?? "";
    try {
      return await this.api.replaceNamespacedLease({ name, namespace: this.namespace, body: lease });
    } catch (err) {
      throw this.failure("update", name, err);
    }
  }

  async list(labelSelector: string): Promise<V1Lease[]> {
    try {
      return (await this.api.listNamespacedLease({ namespace: this.namespace, labelSelector })).items;
    } catch (err) {
      throw this.failure("list", `(selector ${labelSelector})`, err);
    }
  }

  private failure(verb: LeaseVerb, name: string, err: unknown): LeaseError {
    const resource = `Lease ${this.namespace}/${name}`;
    if (err instanceof ApiException) {
      let message = err.message.split("\n")[0] ?? "";
      try {
        const body: unknown = typeof err.body === "string" ? JSON.parse(err.body) : err.body;
        const m = (body as { message?: unknown } | undefined)?.message;
        if (typeof m === "string") message = m;
      } catch {
        // keep the exception's own message
      }
      return new LeaseError(verb, resource, `HTTP ${err.code}: ${message}`, err.code, { cause: err });
    }
    const detail = err instanceof Error ? err.message : String(err);
    return new LeaseError(verb, resource, detail, undefined, { cause: err });
  }
}
