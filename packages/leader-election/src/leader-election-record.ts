/**
 * What a lock holds: the fields of a Lease spec that leader election reads
 * and writes. An empty {@link LeaderElectionRecord.holderIdentity} means the
 * lock was released and anyone may take it at once.
 */
export interface LeaderElectionRecord {
  /** The identity of the holder; `""` when released. */
  holderIdentity: string;
  /** How long, in whole seconds, candidates must see this record unchanged before taking over. */
  leaseDurationSeconds: number;
  /** When the current holder acquired the lock (informational; never compared across hosts). */
  acquireTime: Date | undefined;
  /** When the current holder last renewed (informational; never compared across hosts). */
  renewTime: Date | undefined;
  /** How many times the lock has changed hands. */
  leaseTransitions: number;
}

/** A record as read from a lock, with the version to quote when updating it. */
export interface VersionedRecord {
  record: LeaderElectionRecord;
  /** Opaque version (a Lease's `metadata.resourceVersion`); an update quoting a stale one fails with a conflict. */
  version: string;
}

/**
 * Whether two records are the same, field by field. A candidate restarts its
 * observation clock whenever the record it reads differs from the last one it
 * saw; this is the comparison it uses.
 */
export function sameRecord(
  a: LeaderElectionRecord | undefined,
  b: LeaderElectionRecord | undefined,
): boolean {
  if (!a || !b) return a === b;
  return (
    a.holderIdentity === b.holderIdentity &&
    a.leaseDurationSeconds === b.leaseDurationSeconds &&
    a.leaseTransitions === b.leaseTransitions &&
    a.acquireTime?.getTime() === b.acquireTime?.getTime() &&
    a.renewTime?.getTime() === b.renewTime?.getTime()
  );
}
