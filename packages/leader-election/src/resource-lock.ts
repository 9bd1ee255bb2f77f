import { isAlreadyExists, isConflict, type AlreadyExistsError, type ConflictError } from "@tessera/client";
import type { LeaderElectionRecord, VersionedRecord } from "./leader-election-record.js";

/** The operations a {@link ResourceLock} performs, the `verb` of its errors. */
export type LockVerb = "get" | "create" | "update";

/**
 * A lock that leader election competes for: one record with optimistic
 * concurrency. {@link LeaseLock} is the real one; {@link InMemoryLock} is for
 * unit tests.
 *
 * Every method throws an `ApiError` of `@tessera/client` naming the verb and
 * the resource: a `ConflictError` (409) when an update quoted a stale
 * version and an `AlreadyExistsError` (409) when a create found the lock,
 * both a lost race to another writer, not a fault; a `TransportError`
 * (code 0) when no answer came.
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

/** A lock write that another writer got to first (409: a stale version, or a create of an existing lock). */
export function isLostRace(error: unknown): error is ConflictError | AlreadyExistsError {
  return isConflict(error) || isAlreadyExists(error);
}
