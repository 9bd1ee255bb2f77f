import {
  AlreadyExistsError,
  ConflictError,
  describeResource,
  ForbiddenError,
  Leases,
  NotFoundError,
  TransportError,
  type ApiErrorContext,
} from "@tessera/client";
import type { LeaderElectionRecord, VersionedRecord } from "./leader-election-record.js";
import type { LockVerb, ResourceLock } from "./resource-lock.js";

/**
 * The single record that several {@link InMemoryLock}s compete for, playing
 * the Lease `namespace/name`: its errors are the `ApiError`s a `LeaseLock`
 * would throw.
 */
export class InMemoryLockStore {
  private current: VersionedRecord | undefined;
  private nextVersion = 1;
  /** Every successful write, in order (for assertions). */
  readonly writes: Array<{ verb: "create" | "update"; record: LeaderElectionRecord }> = [];

  constructor(
    readonly namespace = "default",
    readonly name = "in-memory",
  ) {}

  /** `Lease <namespace>/<name>`, for messages. */
  get resource(): string {
    return `Lease ${this.namespace}/${this.name}`;
  }

  /**
   * What an error of `verb` on this lock is about.
   * @internal
   */
  context(verb: LockVerb): ApiErrorContext {
    return { verb, resource: describeResource(Leases), namespace: this.namespace, name: this.name };
  }

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
    if (this.current) {
      throw new AlreadyExistsError(
        this.context("create"),
        409,
        "AlreadyExists",
        `"${this.name}" already exists`,
      );
    }
    const version = this.put(record);
    this.writes.push({ verb: "create", record: { ...record } });
    return version;
  }

  /** @internal */
  update(record: LeaderElectionRecord, version: string): string {
    if (!this.current) throw new NotFoundError(this.context("update"), 404, "NotFound", "not found");
    if (this.current.version !== version) {
      throw new ConflictError(this.context("update"), 409, "Conflict", "the object has been modified");
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
      throw new TransportError(
        this.store.context(verb),
        0,
        "ConnectionFailed",
        "the response was lost (the request took effect)",
      );
    }
    return value;
  }

  private async serve(verb: LockVerb, signal: AbortSignal | undefined): Promise<void> {
    const aborted = () => {
      const reason: unknown = signal?.reason;
      return new TransportError(
        this.store.context(verb),
        0,
        "Aborted",
        reason instanceof Error ? reason.message : "aborted",
      );
    };
    if (signal?.aborted) throw aborted();
    switch (this.fault) {
      case "unreachable":
        throw new TransportError(this.store.context(verb), 0, "ConnectionFailed", "connect ECONNREFUSED");
      case "forbidden":
        throw new ForbiddenError(
          this.store.context(verb),
          403,
          "Forbidden",
          `cannot ${verb} resource "leases"`,
        );
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
