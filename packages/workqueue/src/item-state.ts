/**
 * What a work queue knows about one item: whether it is queued, being
 * processed, or both (re-added while processing). One object per item, found
 * with one `Map` lookup. When an item is neither, its state stays for a while
 * so that an item that comes back soon costs no allocation; idle states are
 * swept in batches. Internal to the package.
 */
export interface ItemState<T> {
  readonly item: T;
  /** Must be handed out (again): it is queued, or was re-added while processing. */
  dirty: boolean;
  /** Handed out and not yet done. */
  processing: boolean;
  /** The priority of the pending hand-out. */
  priority: number;
  /** Clock reading when it became dirty (for the queue-duration metric; 0 without metrics). */
  addedAt: number;
  /** Clock reading when it was handed out (for the work-duration metrics; 0 without metrics). */
  since: number;
  /** Idle and used since the last sweep (an idle state not used for a whole sweep interval is dropped). */
  recent: boolean;
  /** Priorities of the ready-queue levels that still hold a superseded copy of this state. */
  stale: number[] | undefined;
}
