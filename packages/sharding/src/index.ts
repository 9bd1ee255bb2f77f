export { fnv1a64, fnv1a64Hex, fnv1a64Words } from "./fnv1a64.js";
export type { Hash64 } from "./fnv1a64.js";
export {
  HASH_SPACE,
  FULL_RANGE,
  isValidHashRange,
  rangeContains,
  mergeRanges,
  rangesSize,
} from "./hash-range.js";
export type { HashRange } from "./hash-range.js";
export { formatHashBound, TOP_BOUND_LITERAL } from "./hash-bound.js";
export { SHARD_FIELDS, DEFAULT_SHARD_FIELD, isShardField, shardKeyOf } from "./shard-field.js";
export type { ShardField, ShardKeySource } from "./shard-field.js";
export { ShardSelector } from "./shard-selector.js";
export { parseShardSelector } from "./shard-selector-parser.js";
export type { ParsedShardSelector } from "./shard-selector-parser.js";
export { ShardSelectorError, ACCEPTED_SELECTOR_FORMS } from "./shard-selector-error.js";
export { checkTiling, assertTiling, TilingError } from "./tiling.js";
export type { TilingReport } from "./tiling.js";
export { SlotSpace, SlotCountError, DEFAULT_SLOT_COUNT, MAX_SLOT_COUNT } from "./slot-space.js";
export { planSlots } from "./slot-planner.js";
export type { SlotOwners, SlotPlan } from "./slot-planner.js";
export { shardSelectorParam, withShardSelector } from "./shard-selector-query.js";
export { controllerOwnerOf, secondaryShardKey } from "./owner-routing.js";
export type { OwnerReferenceLike, OwnedObject } from "./owner-routing.js";
export { createDequeueGuard } from "./dequeue-guard.js";
export type { DequeueGuardOptions } from "./dequeue-guard.js";
export {
  emptyAssignment,
  advanceAssignment,
  activeSlotsOf,
  releasingSlotsOf,
  isSettled,
} from "./assignment.js";
export type { Assignment, RingView } from "./assignment.js";
export { ringParticipants } from "./ring-participants.js";
export type { RingParticipants } from "./ring-participants.js";
export { encodeAssignment, decodeAssignment, AssignmentFormatError } from "./assignment-codec.js";
export type { EncodedAssignment } from "./assignment-codec.js";
export {
  ConfigMapAssignmentStore,
  AssignmentStoreError,
  AssignmentConflictError,
  RING_LABEL,
} from "./assignment-store.js";
export type {
  AssignmentStoreVerb,
  VersionedAssignment,
  ConfigMapAssignmentStoreOptions,
} from "./assignment-store.js";
export { KubernetesLeaseClient, LeaseError } from "./lease-client.js";
export type { LeaseClient, LeaseVerb } from "./lease-client.js";
export {
  MemberLease,
  MemberFencedError,
  memberLeaseName,
  ACKNOWLEDGED_EPOCH_ANNOTATION,
} from "./member-lease.js";
export type { MemberLeaseOptions } from "./member-lease.js";
export { MemberTracker } from "./member-tracker.js";
export type { TrackedMember } from "./member-tracker.js";
export { RingCoordinator } from "./ring-coordinator.js";
export type { RingCoordinatorOptions } from "./ring-coordinator.js";
export { ShardMember } from "./shard-member.js";
export type { ShardMemberOptions, SlotChange, AssignmentReader } from "./shard-member.js";
export { MemberMetrics, CoordinatorMetrics, ShardedReflectorMetrics } from "./sharding-metrics.js";
export type { MemberMetricsSnapshot, ShardedReflectorMetricsSnapshot } from "./sharding-metrics.js";
export { shareConnections } from "./connection-sharing.js";
export { ShardedReflector, ShardedReflectorStateError } from "./sharded-reflector.js";
export type { ShardedReflectorOptions, RangeReflectorOptions, RangeState } from "./sharded-reflector.js";
export { RangeListerWatcher } from "./range-lister-watcher.js";
export { RangeScopedStore } from "./range-scoped-store.js";
export { ShardLedger } from "./shard-ledger.js";
export type { ClaimOwner } from "./shard-ledger.js";
export { diffRanges } from "./range-diff.js";
export type { RangeDiff } from "./range-diff.js";
export { probeServerFiltering } from "./server-filtering-probe.js";
export type { ServerFilteringProbe } from "./server-filtering-probe.js";
