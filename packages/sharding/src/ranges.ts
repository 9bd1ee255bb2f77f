/**
 * @tessera/sharding/ranges: the shard math, pure and without I/O: the API server's FNV-1a 64 hash,
 * hash ranges and shardSelectors (built, parsed, matched), slots and the minimal-move planner, and the
 * epoch-by-epoch assignment with its ConfigMap codec. Running a ring is `@tessera/sharding`'s part.
 */
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
export { diffRanges } from "./range-diff.js";
export type { RangeDiff } from "./range-diff.js";
export { checkTiling, assertTiling, TilingError } from "./tiling.js";
export type { TilingReport } from "./tiling.js";

export { SHARD_FIELDS, DEFAULT_SHARD_FIELD, isShardField, shardKeyOf } from "./shard-field.js";
export type { ShardField, ShardKeySource } from "./shard-field.js";
export { ShardSelector } from "./shard-selector.js";
export { parseShardSelector } from "./shard-selector-parser.js";
export type { ParsedShardSelector } from "./shard-selector-parser.js";
export { ShardSelectorError, ACCEPTED_SELECTOR_FORMS } from "./shard-selector-error.js";
export { shardSelectorParam, withShardSelector } from "./shard-selector-query.js";

export { SlotSpace, SlotCountError, DEFAULT_SLOT_COUNT, MAX_SLOT_COUNT } from "./slot-space.js";
export { planSlots } from "./slot-planner.js";
export type { SlotOwners, SlotPlan } from "./slot-planner.js";
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
