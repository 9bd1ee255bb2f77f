import {
  resolveInstrumentation,
  type Clock,
  type Instrumentation,
  type Logger,
  type RandomSource,
  type Timer,
} from "@tessera/core";

/**
 * The default width of one bucket: keys due within the same quarter second
 * are fired together. A quarter, not a whole second, so that the work of one
 * second is spread over four ticks: with one tick a second jittered by a
 * quarter, a given second would see no tick or two, and half or double the
 * mean rate of resyncs.
 */
export const RESYNC_BUCKET_MS = 250;

/** The ticker fires every bucket width, each delay jittered by this fraction either way. */
export const RESYNC_TICK_JITTER = 0.25;

/**
 * The golden ratio's fractional part: successive multiples of it, modulo 1,
 * fall as evenly over [0, 1) as any sequence can (each new point lands in
 * the largest gap left), which spreads first deadlines more evenly than
 * independent uniform draws do.
 */
const GOLDEN_FRACTION = (Math.sqrt(5) - 1) / 2;

/** What one tick of a {@link ResyncScheduler} did, for tests and instrumentation. */
export interface ResyncTick {
  /** The clock reading at the tick. */
  readonly at: number;
  /** Buckets that fell due and were emptied. */
  readonly buckets: number;
  /** Bucket entries looked at: the tick's work. Live and stale (untracked meanwhile) entries alike. */
  readonly examined: number;
  /** Keys handed to their schedules' callbacks. */
  readonly delivered: number;
  /** Entries still waiting in later buckets. */
  readonly pending: number;
}

/**
 * Options of a {@link ResyncScheduler}. Its `random` spreads first deadlines
 * over the period and jitters the ticker; its `clock` runs the ticker.
 */
export interface ResyncSchedulerOptions extends Instrumentation {
  /** The width of a bucket and the ticker's mean interval, in ms; default {@link RESYNC_BUCKET_MS}. */
  bucketMs?: number;
  /** Called after every tick with what it did. */
  onTick?: (tick: ResyncTick) => void;
}

/** keys due in one bucket, by the schedule they belong to */
type Bucket = Map<ResyncSchedule, string[]>;

/**
 * Periodic re-delivery ("resync") of many keys on one timer, the way the
 * apiserver's watch cache schedules bookmarks for its watchers:
 *
 * - every tracked key is filed under the bucket (a quarter second by
 *   default, counted from the scheduler's creation) in which it is next due;
 *   the first deadlines of a schedule's keys are spread evenly over its
 *   period (a golden-ratio sequence from a random start), so a collection
 *   tracked all at once falls due at an even rate, not all at once;
 * - one ticker, re-armed after each tick with a delay of one bucket width
 *   jittered by a quarter either way, pops every bucket whose time has
 *   passed; a tick costs O(keys due), and a tick with nothing due costs a
 *   map lookup;
 * - a key popped is filed again one period later, so each key is re-delivered
 *   once per period, give or take a bucket and a tick;
 * - untracking is O(1): the key's entry stays in its bucket and is skipped
 *   when popped (its recorded bucket no longer matches).
 *
 * No timer is pending while nothing is tracked.
 *
 * ```ts
 * const scheduler = new ResyncScheduler();
 * const schedule = scheduler.schedule(60_000, (keys) => keys.forEach(resync));
 * schedule.track("default/my-config");
 * ```
 */
export class ResyncScheduler {
  private readonly clock: Clock;
  private readonly random: RandomSource;
  private readonly logger: Logger;
  private readonly onTick: ((tick: ResyncTick) => void) | undefined;
  private readonly origin: number;
  /** @internal The width of a bucket, in ms. */
  readonly bucketMs: number;
  private readonly buckets = new Map<number, Bucket>();
  /** The lowest bucket not popped yet; everything below has fired. */
  private nextBucket = 0;
  private entries = 0;
  private timer: Timer | undefined;
  private ticks = 0;

  constructor(options: ResyncSchedulerOptions = {}) {
    const tools = resolveInstrumentation(options, "@tessera/informers");
    this.clock = tools.clock;
    this.random = tools.random;
    this.logger = tools.logger;
    this.onTick = options.onTick;
    const bucketMs = options.bucketMs ?? RESYNC_BUCKET_MS;
    if (!Number.isFinite(bucketMs) || bucketMs < 1) {
      throw new RangeError(`resync bucket width must be at least 1 ms, got ${bucketMs}`);
    }
    this.bucketMs = bucketMs;
    this.origin = this.clock.now();
  }

  /**
   * A new schedule: every key it tracks is handed to `onDue` once per
   * `periodMs` (rounded up to whole buckets, at least one), several due keys
   * at a time. `onDue` runs synchronously in the tick; it may track and
   * untrack keys.
   */
  schedule(periodMs: number, onDue: (keys: readonly string[]) => void, name = "resync"): ResyncSchedule {
    if (!Number.isFinite(periodMs) || periodMs <= 0) {
      throw new RangeError(`resync period must be a positive number of milliseconds, got ${periodMs}`);
    }
    return new ResyncSchedule(this, periodMs, onDue, name);
  }

  /** Entries waiting in buckets (stale ones of untracked keys included, until their bucket fires). */
  get pendingEntries(): number {
    return this.entries;
  }

  /** Whether the ticker is armed (it is exactly when something is pending). */
  get tickerArmed(): boolean {
    return this.timer !== undefined;
  }

  /** How many ticks have run. */
  get tickCount(): number {
    return this.ticks;
  }

  /** @internal The bucket a deadline falls in, never one already popped. */
  bucketFor(dueAt: number): number {
    return Math.max(this.nextBucket, Math.floor((dueAt - this.origin) / this.bucketMs));
  }

  /** @internal The clock reading now. */
  now(): number {
    return this.clock.now();
  }

  /** @internal A uniform number in [0, 1). */
  randomFraction(): number {
    return this.random();
  }

  /** @internal Files `key` of `schedule` under `bucketId`. */
  file(schedule: ResyncSchedule, key: string, bucketId: number): void {
    let bucket = this.buckets.get(bucketId);
    if (!bucket) {
      bucket = new Map();
      this.buckets.set(bucketId, bucket);
    }
    let keys = bucket.get(schedule);
    if (!keys) {
      keys = [];
      bucket.set(schedule, keys);
    }
    keys.push(key);
    this.entries++;
    if (!this.timer) this.arm();
  }

  /** @internal Drops every entry of a closed schedule: O(buckets), not O(entries). */
  forget(schedule: ResyncSchedule): void {
    for (const [id, bucket] of this.buckets) {
      const keys = bucket.get(schedule);
      if (!keys) continue;
      this.entries -= keys.length;
      bucket.delete(schedule);
      if (bucket.size === 0) this.buckets.delete(id);
    }
    if (this.entries === 0) this.disarm();
  }

  private arm(): void {
    const delay = this.bucketMs * (1 + RESYNC_TICK_JITTER * (2 * this.random() - 1));
    this.timer = this.clock.setTimer(delay, () => this.tick());
  }

  private disarm(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  private tick(): void {
    this.timer = undefined;
    this.ticks++;
    const at = this.clock.now();
    const current = Math.floor((at - this.origin) / this.bucketMs);
    const due = new Map<ResyncSchedule, string[]>();
    let buckets = 0;
    let examined = 0;
    let delivered = 0;
    // Walk the watermark up to now; buckets are consecutive, so a tick that
    // finds nothing due costs one lookup per elapsed bucket.
    for (; this.nextBucket <= current; this.nextBucket++) {
      const id = this.nextBucket;
      const bucket = this.buckets.get(id);
      if (!bucket) continue;
      this.buckets.delete(id);
      buckets++;
      for (const [schedule, keys] of bucket) {
        examined += keys.length;
        this.entries -= keys.length;
        let out: string[] | undefined;
        for (const key of keys) {
          if (!schedule.refile(key, id, current)) continue;
          if (!out) {
            out = due.get(schedule);
            if (!out) due.set(schedule, (out = []));
          }
          out.push(key);
          delivered++;
        }
      }
    }
    for (const [schedule, keys] of due) {
      try {
        schedule.deliver(keys);
      } catch (err) {
        this.logger.error("resync callback failed", {
          schedule: schedule.name,
          keys: keys.length,
          error: err instanceof Error ? err.message : String(err),
        });
      }
    }
    if (this.entries > 0 && !this.timer) this.arm();
    this.onTick?.({ at, buckets, examined, delivered, pending: this.entries });
  }
}

/**
 * The keys one consumer wants re-delivered at one period, on a
 * {@link ResyncScheduler}. Made by {@link ResyncScheduler.schedule}.
 */
export class ResyncSchedule {
  /** key -> the bucket it is filed under now */
  private readonly dueIn = new Map<string, number>();
  private readonly periodBuckets: number;
  /** Where the last first deadline fell, as a fraction of the period. */
  private spread: number;
  private closed = false;

  /** @internal */
  constructor(
    private readonly scheduler: ResyncScheduler,
    /** The period asked for, in ms. */
    readonly periodMs: number,
    private readonly onDue: (keys: readonly string[]) => void,
    /** Names the schedule in logs. */
    readonly name: string,
  ) {
    this.periodBuckets = Math.max(1, Math.ceil(periodMs / scheduler.bucketMs));
    this.spread = scheduler.randomFraction();
  }

  /** How many keys are tracked. */
  get size(): number {
    return this.dueIn.size;
  }

  /** Whether `key` is tracked. */
  has(key: string): boolean {
    return this.dueIn.has(key);
  }

  /**
   * Starts re-delivering `key` once per period; its first delivery falls
   * within the first period, at the next point of the schedule's
   * golden-ratio sequence, so keys tracked together fall due evenly over the
   * period. Tracking a key already tracked changes nothing.
   */
  track(key: string): void {
    if (this.closed || this.dueIn.has(key)) return;
    this.spread = (this.spread + GOLDEN_FRACTION) % 1;
    const firstDue = this.scheduler.now() + this.spread * this.periodMs;
    const id = this.scheduler.bucketFor(firstDue);
    this.dueIn.set(key, id);
    this.scheduler.file(this, key, id);
  }

  /** Stops re-delivering `key`. O(1). */
  untrack(key: string): void {
    this.dueIn.delete(key);
  }

  /** Lets the schedule go for good: its keys are no longer re-delivered and its entries are freed. Harmless twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.dueIn.clear();
    this.scheduler.forget(this);
  }

  /**
   * @internal Called by the tick for an entry popped from `bucketId`: false
   * when the entry is stale; otherwise files the key one period on and returns true.
   */
  refile(key: string, bucketId: number, current: number): boolean {
    if (this.closed || this.dueIn.get(key) !== bucketId) return false;
    const next = current + this.periodBuckets;
    this.dueIn.set(key, next);
    this.scheduler.file(this, key, next);
    return true;
  }

  /** @internal */
  deliver(keys: readonly string[]): void {
    if (!this.closed) this.onDue(keys);
  }
}
