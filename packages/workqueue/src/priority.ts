/**
 * The priority of an add when none is given. Among ready items a higher
 * priority is handed out first; items of one priority come out in FIFO order.
 */
export const NORMAL_PRIORITY = 0;

/**
 * The priority for items that come from an initial list or a resync: they wait
 * behind live events (priority {@link NORMAL_PRIORITY}), as in
 * controller-runtime's priority queue.
 */
export const LOW_PRIORITY = -100;

/** Options for an add to a {@link WorkQueue}. */
export interface AddOptions {
  /** Higher first; default {@link NORMAL_PRIORITY}. A key queued twice keeps the higher of its priorities. */
  priority?: number;
}
