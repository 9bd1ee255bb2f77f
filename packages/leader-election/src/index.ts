/**
 * @tessera/leader-election: one leader among an operator's replicas, on a
 * coordination.k8s.io/v1 Lease with client-go's semantics (LeaderElector on a
 * LeaseLock), and an in-memory lock for unit tests of code that uses it.
 */
export { LeaderElector } from "./leader-elector.js";
export type {
  LeaderCallbacks,
  LeaderElectorOptions,
  LeaderElectionResult,
  LeaderElectionHealth,
} from "./leader-elector.js";
export {
  resolveDurations,
  LeaderElectionConfigError,
  JITTER_FACTOR,
  DEFAULT_LEASE_DURATION_MS,
  DEFAULT_RENEW_DEADLINE_MS,
  DEFAULT_RETRY_PERIOD_MS,
} from "./leader-election-config.js";
export type { LeaderElectionDurations } from "./leader-election-config.js";
export { LeadershipEndedError } from "./leadership-ended-error.js";
export type { LeadershipEndReason } from "./leadership-ended-error.js";
export { LeaseLock } from "./lease-lock.js";
export type { LeaseLockOptions } from "./lease-lock.js";
export type { ResourceLock, LockVerb } from "./resource-lock.js";
export { sameRecord } from "./leader-election-record.js";
export type { LeaderElectionRecord, VersionedRecord } from "./leader-election-record.js";
export { InMemoryLock, InMemoryLockStore } from "./in-memory-lock.js";
export type { InMemoryLockFault } from "./in-memory-lock.js";
export { LeaderElectionMetrics } from "./leader-election-metrics.js";
export type { RenewFailureReason } from "./leader-election-metrics.js";
