/**
 * @tessera/sharding: runs one controller as a ring of replicas: each a ShardMember (member Lease,
 * assignment followed, slots handed over without overlap) and a RingCoordinator, a ShardedReflector
 * caching the member's ranges, and the dequeue guard; ShardedWorkload composes them safely (the
 * handover waits for work in flight, lost slots' keys are dropped at dequeue). The math lives in
 * `@tessera/sharding/ranges`.
 */
export { ShardMember } from "./shard-member.js";
export type { ShardMemberOptions, SlotChange, AssignmentReader } from "./shard-member.js";
export { RingCoordinator } from "./ring-coordinator.js";
export type { RingCoordinatorOptions } from "./ring-coordinator.js";
export {
  MemberLease,
  MemberFencedError,
  memberLeaseName,
  ACKNOWLEDGED_EPOCH_ANNOTATION,
  OBJECTS_CACHED_ANNOTATION,
  SERVER_FILTERING_ANNOTATION,
} from "./member-lease.js";
export type { MemberLeaseOptions, MemberReport } from "./member-lease.js";

export { ShardedWorkload } from "./sharded-workload.js";
export type { ShardedWorkloadOptions, UnlabelledObject } from "./sharded-workload.js";

export { createDequeueGuard } from "./dequeue-guard.js";
export { InFlightReconciles } from "./in-flight-reconciles.js";
export type { DequeueGuardOptions } from "./dequeue-guard.js";
export { controllerOwnerOf, secondaryShardKey } from "./owner-routing.js";
export type { OwnerReferenceLike, OwnedObject } from "./owner-routing.js";

export { ShardedReflector, ShardedReflectorStateError } from "./sharded-reflector.js";
export type {
  ShardedReflectorOptions,
  RangeReflectorOptions,
  RangeScope,
  RangeState,
} from "./sharded-reflector.js";
export {
  OWNER_SLOT_LABEL,
  OwnerSlotListerWatcher,
  expectedOwnerSlot,
  groupOf,
  ownerSlotLabelValue,
  ownerSlotSelector,
  slotsOfRange,
  unlabelledSelector,
} from "./owner-slot-label.js";
export { UNLABELLED_NAMESPACE_LIMIT, unlabelledLookNamespaces } from "./unlabelled-look.js";
export type { UnlabelledLookInputs } from "./unlabelled-look.js";
export { probeServerFiltering } from "./server-filtering-probe.js";
export type { ServerFilteringProbe } from "./server-filtering-probe.js";

export { ConfigMapAssignmentStore, RING_LABEL } from "./assignment-store.js";
export type { VersionedAssignment, ConfigMapAssignmentStoreOptions } from "./assignment-store.js";
export { KubernetesLeaseClient } from "./lease-client.js";
export type { LeaseClient, KubernetesLeaseClientOptions } from "./lease-client.js";
