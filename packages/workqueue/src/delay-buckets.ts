import { MinHeap, type Clock, type Timer } from "@tessera/core";
import { bucketFireTime } from "./delay-granularity.js";
import { NORMAL_PRIORITY } from "./priority.js";

/**
 * The delayed adds of a work queue. Items are filed in buckets keyed by the
 * instant they fire ({@link bucketFireTime}: one-second buckets for long
 * delays, finer ones for short delays), and one timer is armed for the
 * earliest bucket. A million pending items therefore cost one timer, and a
 * tick costs O(items due) plus O(log buckets); nothing runs between buckets.
 *
 * Each item waits at most once: filing an item that already waits keeps the
 * earlier fire time (and the higher priority). Moving an item to an earlier
 * bucket or cancelling it leaves its old copy in place; the copy is skipped
 * when that bucket fires. Internal to the package.
 */
export class DelayBuckets<T> {
  /** When each waiting item fires; the authority over stale bucket copies. */
  private readonly fireTimes = new Map<T, number>();
  /** Priorities other than the default, for the few items that have one. */
  private readonly priorities = new Map<T, number>();
  private readonly buckets = new Map<number, T[]>();
  private readonly order = new MinHeap<number>((a, b) => a < b);
  private timer: Timer | undefined;
  private armedFor = Number.POSITIVE_INFINITY;
  private tickCount = 0;

  constructor(
    private readonly clock: Clock,
    private readonly onDue: (item: T, priority: number) => void,
  ) {}

  /** Items waiting. */
  get size(): number {
    return this.fireTimes.size;
  }

  /** How many times the timer has fired so far. */
  get ticks(): number {
    return this.tickCount;
  }

  /** The clock reading at which `item` fires, or `undefined` if it is not waiting. */
  fireTimeOf(item: T): number | undefined {
    return this.fireTimes.get(item);
  }

  /**
   * Files `item` to fire `delayMs` (> 0) from now. If it already waits for an
   * earlier or the same bucket, only its priority may rise. Returns whether the
   * fire time was set or moved.
   */
  schedule(item: T, delayMs: number, priority: number): boolean {
    const fireAt = bucketFireTime(this.clock.now(), delayMs);
    const current = this.fireTimes.get(item);
    if (priority !== NORMAL_PRIORITY || current !== undefined) this.mergePriority(item, priority, current);
    if (current !== undefined && current <= fireAt) return false;
    this.fireTimes.set(item, fireAt);
    let bucket = this.buckets.get(fireAt);
    if (bucket === undefined) {
      bucket = [];
      this.buckets.set(fireAt, bucket);
      this.order.push(fireAt);
    }
    bucket.push(item);
    if (fireAt < this.armedFor) this.arm();
    return true;
  }

  /** Stops `item` from firing; returns whether it was waiting. */
  cancel(item: T): boolean {
    if (!this.fireTimes.delete(item)) return false;
    this.priorities.delete(item);
    return true;
  }

  /** Drops every waiting item and stops the timer. */
  clear(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    this.fireTimes.clear();
    this.priorities.clear();
    this.buckets.clear();
    this.order.clear();
  }

  private mergePriority(item: T, priority: number, current: number | undefined): void {
    const existing = current === undefined ? undefined : (this.priorities.get(item) ?? NORMAL_PRIORITY);
    const merged = existing === undefined ? priority : Math.max(existing, priority);
    if (merged === NORMAL_PRIORITY) this.priorities.delete(item);
    else this.priorities.set(item, merged);
  }

  private arm(): void {
    const next = this.order.peek();
    if (next === this.armedFor) return;
    this.timer?.cancel();
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    if (next === undefined) return;
    this.armedFor = next;
    this.timer = this.clock.setTimer(next - this.clock.now(), () => this.tick());
  }

  private tick(): void {
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    this.tickCount++;
    const now = this.clock.now();
    for (let at = this.order.peek(); at !== undefined && at <= now; at = this.order.peek()) {
      this.order.pop();
      const bucket = this.buckets.get(at);
      this.buckets.delete(at);
      if (bucket === undefined) continue;
      for (const item of bucket) {
        // A copy left behind by a move to an earlier bucket, or by a cancel.
        if (this.fireTimes.get(item) !== at) continue;
        this.fireTimes.delete(item);
        const priority = this.priorities.get(item);
        if (priority !== undefined) this.priorities.delete(item);
        this.onDue(item, priority ?? NORMAL_PRIORITY);
      }
    }
    this.arm();
  }
}
