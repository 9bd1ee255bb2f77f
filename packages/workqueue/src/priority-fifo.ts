import type { ItemState } from "./item-state.js";
import { NORMAL_PRIORITY } from "./priority.js";
import { RingBuffer } from "./ring-buffer.js";

interface Level<T> {
  readonly priority: number;
  readonly states: RingBuffer<ItemState<T>>;
}

/**
 * The ready items of a work queue: one FIFO per priority, highest priority
 * first. Raising a queued item's priority pushes it onto the higher level and
 * notes the copy left behind in `stale`; since a FIFO hands out older copies
 * first, the copy skipped at that level is always the superseded one. Every
 * operation is O(1) amortised, plus the handful of distinct priorities.
 * Internal to the package.
 */
export class PriorityFifo<T> {
  /** Sorted by priority, highest first; in practice one or two levels. */
  private readonly levels: Level<T>[] = [];
  private liveCount = 0;
  private normal: Level<T> | undefined;

  /** Items waiting. */
  get length(): number {
    return this.liveCount;
  }

  /** Appends `state` at the level of its priority. */
  push(state: ItemState<T>): void {
    const level =
      state.priority === NORMAL_PRIORITY
        ? (this.normal ??= this.level(NORMAL_PRIORITY))
        : this.level(state.priority);
    level.states.push(state);
    this.liveCount++;
  }

  /** Moves a waiting `state` to the end of the higher level `priority`. */
  raise(state: ItemState<T>, priority: number): void {
    (state.stale ??= []).push(state.priority);
    state.priority = priority;
    this.liveCount--;
    this.push(state);
  }

  /** Removes and returns the oldest item of the highest priority. */
  shift(): ItemState<T> | undefined {
    if (this.liveCount === 0) return undefined;
    const levels = this.levels;
    for (let i = 0; i < levels.length; i++) {
      const level = levels[i] as Level<T>;
      for (let state = level.states.shift(); state !== undefined; state = level.states.shift()) {
        if (state.stale !== undefined && this.consumeStale(state, level.priority)) continue;
        this.liveCount--;
        return state;
      }
      // Keep the default level (it empties and refills all the time); drop drained others.
      if (level.priority !== NORMAL_PRIORITY) levels.splice(i--, 1);
    }
    return undefined;
  }

  private consumeStale(state: ItemState<T>, priority: number): boolean {
    const stale = state.stale as number[];
    const at = stale.indexOf(priority);
    if (at < 0) return false;
    stale.splice(at, 1);
    if (stale.length === 0) state.stale = undefined;
    return true;
  }

  private level(priority: number): Level<T> {
    const levels = this.levels;
    let i = 0;
    for (; i < levels.length; i++) {
      const level = levels[i] as Level<T>;
      if (level.priority === priority) return level;
      if (level.priority < priority) break;
    }
    const level: Level<T> = { priority, states: new RingBuffer<ItemState<T>>() };
    levels.splice(i, 0, level);
    return level;
  }
}
