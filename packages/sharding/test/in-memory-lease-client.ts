import type { V1Lease } from "@kubernetes/client-node";
import { AlreadyExistsError, ConflictError, NotFoundError, type ApiErrorContext } from "@tessera/client";
import type { LeaseClient } from "../src/index.js";

/** What an error of `verb` on the Lease `test/<name>` is about, as `KubernetesLeaseClient` says it. */
export function leaseContext(verb: string, name: string): ApiErrorContext {
  return { verb, resource: "leases.coordination.k8s.io", namespace: "test", name };
}

/** A LeaseClient over a Map, with resourceVersion preconditions and switchable faults. */
export class InMemoryLeaseClient implements LeaseClient {
  readonly namespace = "test";
  readonly leases = new Map<string, V1Lease>();
  /** When set, every call rejects with this error. */
  failWith: Error | undefined;
  /** When true, every call hangs until `unhang()`. */
  private hung: (() => void)[] | undefined;
  calls = 0;
  private rv = 0;

  hang(): void {
    this.hung = [];
  }

  unhang(): void {
    const waiting = this.hung ?? [];
    this.hung = undefined;
    for (const w of waiting) w();
  }

  private async gate(): Promise<void> {
    this.calls++;
    if (this.hung) await new Promise<void>((resolve) => this.hung!.push(resolve));
    if (this.failWith) throw this.failWith;
  }

  async get(name: string): Promise<V1Lease | undefined> {
    await this.gate();
    const l = this.leases.get(name);
    return l && structuredClone(l);
  }

  async create(lease: V1Lease): Promise<V1Lease> {
    await this.gate();
    const name = lease.metadata!.name!;
    if (this.leases.has(name)) {
      throw new AlreadyExistsError(leaseContext("create", name), 409, "AlreadyExists", "exists");
    }
    return this.store(lease);
  }

  async replace(lease: V1Lease): Promise<V1Lease> {
    await this.gate();
    const name = lease.metadata!.name!;
    const current = this.leases.get(name);
    if (!current) throw new NotFoundError(leaseContext("update", name), 404, "NotFound", "not found");
    if (current.metadata!.resourceVersion !== lease.metadata?.resourceVersion) {
      throw new ConflictError(leaseContext("update", name), 409, "Conflict", "the object has been modified");
    }
    return this.store(lease);
  }

  async list(labelSelector: string): Promise<V1Lease[]> {
    await this.gate();
    const [k, v] = labelSelector.split("=");
    return [...this.leases.values()]
      .filter((l) => l.metadata?.labels?.[k!] === v)
      .map((l) => structuredClone(l));
  }

  async delete(name: string, resourceVersion: string): Promise<void> {
    await this.gate();
    const current = this.leases.get(name);
    if (!current) return;
    if (current.metadata!.resourceVersion !== resourceVersion) {
      throw new ConflictError(leaseContext("delete", name), 409, "Conflict", "precondition failed");
    }
    this.leases.delete(name);
  }

  /** Writes as another party would (bumps the version). */
  store(lease: V1Lease): V1Lease {
    const copy = structuredClone({
      ...lease,
      metadata: { ...lease.metadata, resourceVersion: String(++this.rv) },
    });
    this.leases.set(copy.metadata.name!, copy);
    return structuredClone(copy);
  }
}
