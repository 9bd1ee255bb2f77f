import type { LeaderElectionRecord, VersionedRecord } from "./leader-election-record.js";
import { LockConflictError, LockError, type LockVerb } from "./lock-error.js";
import type { ResourceLock } from "./resource-lock.js";

/** The single record that several {@link InMemoryLock}s compete for. */
export class InMemoryLockStore {
  private current: VersionedRecord | undefined;
  private nextVersion = 1;
  /** Every successful write, in order (for assertions). */
  readonly writes: Array<{ verb: "create" | "update"; record: LeaderElectionRecord }> = [];

  constructor(readonly resource = "Lease default/in-memory") {}

  /** The record as it stands, or `undefined` before the first create. */
  read(): VersionedRecord | undefined {
    return this.current && { record: { ...this.current.record }, version: this.current.version };
  }

  /** Writes `record` unconditionally, as another party editing the lock would. */
  put(record: LeaderElectionRecord): string {
    const version = String(this.nextVersion++);
    this.current = { record: { ...record }, version };
    return version;
  }

  /** @internal */
  create(record: LeaderElectionRecord): string {
    if (this.current) throw new LockConflictError("create", this.resource, "already exists", { status: 409 });
    const version = this.put(record);
    this.writes.push({ verb: "create", record: { ...record } });
    return version;
  }

  /** @internal */
  update(record: LeaderElectionRecord, version: string): string {
    if (!this.current) throw new LockError("update", this.resource, "not found", { status: 404 });
    if (this.current.version !== version) {
      throw new LockConflictError("update", this.resource, "the object has been modified", { status: 409 });
    }
    const next = this.put(record);
    this.writes.push({ verb: "update", record: { ...record } });
    return next;
  }
}

/** How an {@link InMemoryLock} misbehaves, to play a broken network in tests. */
export type InMemoryLockFault =
  /** Every call fails at once, as with a refused connection. */
  | "unreachable"
  /** Every call hangs until its signal aborts, as with a stalled connection. */
  | "hang"
  /** Every call fails with HTTP 403, as with missing RBAC. */
  | "forbidden"
  /** Every call takes effect, but the caller gets an error, as when a response is lost on the way back. */
  | "lose-responses";

/**
 * A {@link ResourceLock} over an {@link InMemoryLockStore}, for unit tests of
 * code that uses leader election. Several locks (one per identity) share one
 * store. Calls complete on the next microtask; no time passes.
 */
export class InMemoryLock implements ResourceLock {
  /** Set to make calls fail; `undefined` for normal service. */
  fault: InMemoryLockFault | undefined;

  constructor(
    readonly store: InMemoryLockStore,
    readonly identity: string,
  ) {}

  describe(): string {
    return this.store.resource;
  }

  async get(signal?: AbortSignal): Promise<VersionedRecord | undefined> {
    await this.serve("get", signal);
    return this.respond("get", this.store.read());
  }

  async create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<string> {
    await this.serve("create", signal);
    return this.respond("create", this.store.create(record));
  }

  async update(record: LeaderElectionRecord, version: string, signal?: AbortSignal): Promise<string> {
    await this.serve("update", signal);
    return this.respond("update", this.store.update(record, version));
  }

  private respond<T>(verb: LockVerb, value: T): T {
    if (this.fault === "lose-responses") {
      throw new LockError(verb, this.store.resource, "the response was lost (the request took effect)");
    }
    return value;
  }

  private async serve(verb: LockVerb, signal: AbortSignal | undefined): Promise<void> {
    const aborted = () => {
      const reason: unknown = signal?.reason;
      return new LockError(verb, this.store.resource, reason instanceof Error ? reason.message : "aborted");
    };
    if (signal?.aborted) throw aborted();
    switch (this.fault) {
      case "unreachable":
        throw new LockError(verb, this.store.resource, "connect ECONNREFUSED");
      case "forbidden":
        throw new LockError(verb, this.store.resource, `HTTP 403: cannot ${verb} resource "leases"`, {
          status: 403,
        });
      case "hang":
        await new Promise<never>((_, reject) => {
          signal?.addEventListener("abort", () => reject(aborted()), { once: true });
        });
        return;
      case "lose-responses": // fails in respond(), after the call took effect
      case undefined:
        await Promise.resolve();
        if (signal?.aborted) throw aborted();
    }
  }
}
