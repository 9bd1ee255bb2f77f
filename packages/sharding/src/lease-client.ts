import { Agent } from "node:https";
import type { V1Lease } from "@kubernetes/client-node";
import {
  describeKubeFailure,
  requestKubeJson,
  type KubeConfigLike,
  type KubeJsonRequest,
} from "@tessera/client";

/** The Lease operations membership needs. */
export type LeaseVerb = "get" | "create" | "update" | "list" | "delete";

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
  /**
   * Deletes the Lease `name` if it is still at `resourceVersion` (a
   * precondition: 409 when it changed since); resolves when it is gone, also
   * when it was gone already.
   */
  delete(name: string, resourceVersion: string): Promise<void>;
}

/**
 * {@link LeaseClient} over `coordination.k8s.io/v1`: JSON over the reflector's
 * request, on kept-alive connections (a member renews every retry period).
 */
export class KubernetesLeaseClient implements LeaseClient {
  private readonly path: string;
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 4 });

  constructor(
    private readonly kubeConfig: KubeConfigLike,
    readonly namespace: string,
  ) {
    this.path = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;
  }

  get(name: string): Promise<V1Lease | undefined> {
    return this.call<V1Lease>(
      "get",
      name,
      { method: "GET", path: `${this.path}/${encodeURIComponent(name)}` },
      true,
    );
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
    return this.call<V1Lease>("update", name, {
      method: "PUT",
      path: `${this.path}/${encodeURIComponent(name)}`,
      body: lease,
    });
  }

  async list(labelSelector: string): Promise<V1Lease[]> {
    const list = await this.call<{ items?: V1Lease[] }>("list", `(selector ${labelSelector})`, {
      method: "GET",
      path: this.path,
      query: new URLSearchParams({ labelSelector }).toString(),
    });
    return list.items ?? [];
  }

  async delete(name: string, resourceVersion: string): Promise<void> {
    await this.call<unknown>(
      "delete",
      name,
      {
        method: "DELETE",
        path: `${this.path}/${encodeURIComponent(name)}`,
        body: { apiVersion: "v1", kind: "DeleteOptions", preconditions: { resourceVersion } },
      },
      true,
    );
  }

  private async call<T>(
    verb: LeaseVerb,
    name: string,
    request: KubeJsonRequest,
    absentOk: true,
  ): Promise<T | undefined>;
  private async call<T>(verb: LeaseVerb, name: string, request: KubeJsonRequest): Promise<T>;
  private async call<T>(
    verb: LeaseVerb,
    name: string,
    request: KubeJsonRequest,
    absentOk = false,
  ): Promise<T | undefined> {
    const resource = `Lease ${this.namespace}/${name}`;
    let answer;
    try {
      answer = await requestKubeJson<T>(this.kubeConfig, { ...request, agent: this.agent });
    } catch (err) {
      const detail = err instanceof Error ? err.message : String(err);
      throw new LeaseError(verb, resource, detail, undefined, { cause: err });
    }
    if (answer.code >= 200 && answer.code < 300 && answer.value !== undefined) return answer.value;
    if (answer.code === 404 && absentOk) return undefined;
    throw new LeaseError(verb, resource, describeKubeFailure(answer), answer.code);
  }
}
