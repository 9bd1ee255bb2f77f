import type { V1Lease } from "@kubernetes/client-node";
import { LeaseError, type LeaseClient } from "../src/index.js";

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
    if (this.leases.has(name)) throw new LeaseError("create", `Lease test/${name}`, "HTTP 409: exists", 409);
    return this.store(lease);
  }

  async replace(lease: V1Lease): Promise<V1Lease> {
    await this.gate();
    const name = lease.metadata!.name!;
    const current = this.leases.get(name);
    if (!current) throw new LeaseError("update", `Lease test/${name}`, "HTTP 404: not found", 404);
    if (current.metadata!.resourceVersion !== lease.metadata?.resourceVersion) {
      throw new LeaseError("update", `Lease test/${name}`, "HTTP 409: the object has been modified", 409);
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
      throw new LeaseError("delete", `Lease test/${name}`, "HTTP 409: precondition failed", 409);
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
