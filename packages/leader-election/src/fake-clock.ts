import type { Clock, Timer } from "./clock.js";

interface PendingTimer {
  due: number;
  seq: number;
  callback: () => void;
}

/**
 * A {@link Clock} for unit tests: time stands still until the test moves it
 * with {@link FakeClock.advance}, which fires the due timers in order and lets
 * the promise chains they start settle in between. No real time passes.
 *
 * ```ts
 * const clock = new FakeClock();
 * const elector = new LeaderElector({ lock, clock, callbacks });
 * void elector.run();
 * await clock.advance(2_000);
 * ```
 */
export class FakeClock implements Clock {
  private monotonicMs: number;
  private wallOffsetMs: number;
  private seq = 0;
  private readonly timers = new Set<PendingTimer>();

  /**
   * @param options.startMs - the first reading of {@link FakeClock.now}; default 0
   * @param options.wallTime - the wall time at that moment; default 2025-01-01T00:00:00Z
   */
  constructor(options: { startMs?: number; wallTime?: Date } = {}) {
    this.monotonicMs = options.startMs ?? 0;
    const wall = options.wallTime ?? new Date("2025-01-01T00:00:00Z");
    this.wallOffsetMs = wall.getTime() - this.monotonicMs;
  }

  now(): number {
    return this.monotonicMs;
  }

  wallTime(): Date {
    return new Date(this.monotonicMs + this.wallOffsetMs);
  }

  setTimer(ms: number, callback: () => void): Timer {
    const timer: PendingTimer = { due: this.monotonicMs + Math.max(0, ms), seq: this.seq++, callback };
    this.timers.add(timer);
    return { cancel: () => void this.timers.delete(timer) };
  }

  /** How many timers are waiting to fire. */
  get pendingTimers(): number {
    return this.timers.size;
  }

  /** Moves the wall clock by `ms` (it may go backwards), leaving the monotonic clock alone. */
  skewWallTime(ms: number): void {
    this.wallOffsetMs += ms;
  }

  /**
   * Lets every promise chain that can make progress without time passing run
   * to the point where it waits on a timer (or on nothing).
   */
  async flush(): Promise<void> {
    // Microtasks all run before the next macrotask, so one turn settles any
    // chain of promises that does no real I/O; a few turns cover chains that
    // hop through setImmediate themselves.
    for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  }

  /**
   * Moves time forward by `ms`, firing each timer that falls due on the way
   * at its own instant, in order, and flushing promise chains after each.
   */
  async advance(ms: number): Promise<void> {
    const target = this.monotonicMs + Math.max(0, ms);
    await this.flush();
    for (;;) {
      const next = this.nextDue(target);
      if (!next) break;
      this.timers.delete(next);
      this.monotonicMs = next.due;
      next.callback();
      await this.flush();
    }
    this.monotonicMs = target;
    await this.flush();
  }

  private nextDue(limit: number): PendingTimer | undefined {
    let best: PendingTimer | undefined;
    for (const t of this.timers) {
      if (t.due > limit) continue;
      if (!best || t.due < best.due || (t.due === best.due && t.seq < best.seq)) best = t;
    }
    return best;
  }
}
