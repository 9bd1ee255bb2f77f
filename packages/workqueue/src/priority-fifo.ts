import { NORMAL_PRIORITY } from "./priority.js";
import { RingBuffer } from "./ring-buffer.js";

/** One pending hand-out of an item: what the dirty set of a work queue holds. */
export interface PendingEntry<T> {
  readonly item: T;
  priority: number;
  /** Clock reading when the item became dirty (for the queue-duration metric). */
  readonly addedAt: number;
  /** False once the entry was superseded by a higher-priority copy; dead entries are skipped. */
  live: boolean;
}

interface Level<T> {
  readonly priority: number;
  readonly entries: RingBuffer<PendingEntry<T>>;
}

/**
 * The ready items of a work queue: one FIFO per priority, highest priority
 * first. Raising an entry's priority marks the old copy dead and pushes a new
 * one, so every operation stays O(1) amortised (plus the handful of distinct
 * priorities). Internal to the package.
 */
export class PriorityFifo<T> {
  /** Sorted by priority, highest first; in practice one or two levels. */
  private readonly levels: Level<T>[] = [];
  private liveCount = 0;

  /** Live entries waiting. */
  get length(): number {
    return this.liveCount;
  }

  push(entry: PendingEntry<T>): void {
    this.level(entry.priority).entries.push(entry);
    this.liveCount++;
  }

  /** Moves a waiting live entry to a higher priority; returns the entry that replaces it. */
  raise(entry: PendingEntry<T>, priority: number): PendingEntry<T> {
    entry.live = false;
    this.liveCount--;
    const next: PendingEntry<T> = { item: entry.item, priority, addedAt: entry.addedAt, live: true };
    this.push(next);
    return next;
  }

  /** Removes and returns the oldest live entry of the highest priority. */
  shift(): PendingEntry<T> | undefined {
    if (this.liveCount === 0) return undefined;
    const levels = this.levels;
    for (let i = 0; i < levels.length; i++) {
      const level = levels[i] as Level<T>;
      for (let entry = level.entries.shift(); entry; entry = level.entries.shift()) {
        if (!entry.live) continue;
        this.liveCount--;
        return entry;
      }
      // Keep the default level (it empties and refills all the time); drop drained others.
      if (level.priority !== NORMAL_PRIORITY) levels.splice(i--, 1);
    }
    return undefined;
  }

  /** Removes every entry. */
  clear(): void {
    for (const level of this.levels) level.entries.clear();
    this.liveCount = 0;
  }

  private level(priority: number): Level<T> {
    const levels = this.levels;
    let i = 0;
    for (; i < levels.length; i++) {
      const level = levels[i] as Level<T>;
      if (level.priority === priority) return level;
      if (level.priority < priority) break;
    }
    const level: Level<T> = { priority, entries: new RingBuffer<PendingEntry<T>>() };
    levels.splice(i, 0, level);
    return level;
  }
}
