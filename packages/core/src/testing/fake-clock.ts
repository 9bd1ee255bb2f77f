import type { Clock, Timer } from "../clock.js";
import { MinHeap } from "../min-heap.js";

interface FakeTimer {
  readonly due: number;
  readonly seq: number;
  readonly callback: () => void;
  live: boolean;
}

/** Options of a {@link FakeClock}. */
export interface FakeClockOptions {
  /** The first reading of {@link FakeClock.now}; default 0. */
  startMs?: number;
  /** The wall time at that moment; default 2025-01-01T00:00:00Z. */
  wallTime?: Date;
}

/**
 * A {@link Clock} for unit tests: time stands still until the test moves it.
 * No real time passes.
 *
 * - {@link FakeClock.advance} fires the timers that fall due, in order, each
 *   at its own instant, and lets promise chains settle before, between and
 *   after them, so code that awaits between timers (a reflector backing off,
 *   a worker pool) runs as it would in real time.
 * - {@link FakeClock.advanceSync} fires due timers without settling promises.
 * - {@link FakeClock.advanceToNext} settles pending promises first, then
 *   jumps to the next timer, so a timer started from a promise continuation
 *   is found.
 *
 * ```ts
 * const clock = new FakeClock();
 * const reflector = new Reflector({ listerWatcher, store, clock });
 * void reflector.run(signal);
 * await clock.advance(800); // the first backoff has elapsed
 * ```
 */
export class FakeClock implements Clock {
  private current: number;
  private wallOffsetMs: number;
  private seq = 0;
  private live = 0;
  private readonly timers = new MinHeap<FakeTimer>(
    (a, b) => a.due < b.due || (a.due === b.due && a.seq < b.seq),
  );

  constructor(options: FakeClockOptions = {}) {
    this.current = options.startMs ?? 0;
    const wall = options.wallTime ?? new Date("2025-01-01T00:00:00Z");
    this.wallOffsetMs = wall.getTime() - this.current;
  }

  now(): number {
    return this.current;
  }

  wallTime(): Date {
    return new Date(this.current + this.wallOffsetMs);
  }

  setTimer(ms: number, callback: () => void): Timer {
    const timer: FakeTimer = { due: this.current + Math.max(0, ms), seq: this.seq++, callback, live: true };
    this.timers.push(timer);
    this.live++;
    return {
      cancel: () => {
        if (!timer.live) return;
        timer.live = false;
        this.live--;
      },
    };
  }

  /** How many timers are waiting to fire. */
  get pendingTimers(): number {
    return this.live;
  }

  /** The delays (from now) of the pending timers, soonest first. */
  pendingDelays(): number[] {
    return this.timers
      .toArray()
      .filter((t) => t.live)
      .sort((a, b) => a.due - b.due || a.seq - b.seq)
      .map((t) => t.due - this.current);
  }

  /** The instant the next timer fires, or `undefined` when none is pending. */
  nextTimerDue(): number | undefined {
    this.dropCancelled();
    return this.timers.peek()?.due;
  }

  /** Moves the wall clock by `ms` (it may go backwards), leaving the monotonic clock alone. */
  skewWallTime(ms: number): void {
    this.wallOffsetMs += ms;
  }

  /** Moves time forward by `ms`, firing due timers in order, without letting promises settle in between. */
  advanceSync(ms: number): void {
    const target = this.current + Math.max(0, ms);
    for (let t = this.takeDue(target); t; t = this.takeDue(target)) {
      this.current = Math.max(this.current, t.due);
      t.callback();
    }
    this.current = target;
  }

  /**
   * Moves time forward by `ms`, firing each timer that falls due on the way at
   * its own instant (timers started by those callbacks included), and lets
   * promise chains settle before, between and after the timers.
   */
  async advance(ms: number): Promise<void> {
    const target = this.current + Math.max(0, ms);
    await this.flush();
    for (let t = this.takeDue(target); t; t = this.takeDue(target)) {
      this.current = Math.max(this.current, t.due);
      t.callback();
      await this.flush();
    }
    this.current = target;
    await this.flush();
  }

  /**
   * Lets pending promise chains settle, then moves time to the next pending
   * timer and fires it (and any due at the same instant). Settling first is
   * what finds a timer that a promise continuation is about to start.
   */
  async advanceToNext(): Promise<void> {
    await this.flush();
    const due = this.nextTimerDue();
    if (due !== undefined) await this.advance(due - this.current);
  }

  /** Lets every promise chain that needs no real I/O settle: a few turns of the event loop. */
  async flush(): Promise<void> {
    for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  }

  private takeDue(limit: number): FakeTimer | undefined {
    this.dropCancelled();
    const top = this.timers.peek();
    if (!top || top.due > limit) return undefined;
    this.timers.pop();
    top.live = false;
    this.live--;
    return top;
  }

  private dropCancelled(): void {
    while (this.timers.peek()?.live === false) this.timers.pop();
  }
}
