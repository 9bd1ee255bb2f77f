import { DeletedFinalStateUnknown } from "./deleted-final-state-unknown.js";

/**
 * What happened to an object: `Added`, `Updated`, `Deleted` from watch
 * events; `Replaced` for each object of a relist (a watch-list snapshot or a
 * LIST); `Sync` for a periodic resync of an unchanged object.
 */
export type DeltaType = "Added" | "Updated" | "Deleted" | "Replaced" | "Sync";

/** One change to one object. A `Deleted` delta may carry a tombstone instead of the object. */
export interface Delta<T> {
  readonly type: DeltaType;
  readonly object: T | DeletedFinalStateUnknown<T>;
}

/** What a {@link DeltaFIFO} hands out: one key and its changes, oldest first. */
export interface DeltaBatch<T> {
  readonly key: string;
  /** Never empty; the last delta carries the newest state. */
  readonly deltas: readonly Delta<T>[];
  /** Whether this batch is part of the first snapshot (the FIFO has not synced yet). */
  readonly isInInitialList: boolean;
}

/** How much a live delta says, for merging: an Added stays an Added, an Updated beats a Replaced or Sync. */
const RANK: Record<DeltaType, number> = { Added: 4, Updated: 3, Replaced: 2, Sync: 1, Deleted: 0 };

/**
 * The one delta `a` followed by `b` compresses to, or `undefined` when both
 * must be kept:
 * - two deletions are one; the one that knows the final state (not a
 *   tombstone) is kept;
 * - two deltas that both carry a live object are one, with the newer object
 *   and the more significant type (Added > Updated > Replaced > Sync);
 * - a deletion and a live delta, either way round, stay two.
 */
export function compressDeltas<T>(a: Delta<T>, b: Delta<T>): Delta<T> | undefined {
  if (a.type === "Deleted" && b.type === "Deleted") {
    return b.object instanceof DeletedFinalStateUnknown ? a : b;
  }
  if (a.type === "Deleted" || b.type === "Deleted") return undefined;
  return { type: RANK[a.type] >= RANK[b.type] ? a.type : b.type, object: b.object };
}
