import type { LeaderElectionRecord, VersionedRecord } from "./leader-election-record.js";

/**
 * A lock that leader election competes for: one record with optimistic
 * concurrency. {@link LeaseLock} is the real one; {@link InMemoryLock} is for
 * unit tests.
 *
 * Every method throws a {@link LockError} naming the verb and the resource,
 * and {@link LockConflictError} when another writer got there first.
 */
export interface ResourceLock {
  /** The identity this lock writes as holder. */
  readonly identity: string;
  /** The locked resource, for messages and logs, e.g. `Lease default/my-operator`. */
  describe(): string;
  /** Reads the record; `undefined` when the lock does not exist yet. */
  get(signal?: AbortSignal): Promise<VersionedRecord | undefined>;
  /** Creates the lock holding `record`; returns its version. Conflict when it already exists. */
  create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<string>;
  /** Replaces the record if its version is still `version`; returns the new version. Conflict otherwise. */
  update(record: LeaderElectionRecord, version: string, signal?: AbortSignal): Promise<string>;
}
