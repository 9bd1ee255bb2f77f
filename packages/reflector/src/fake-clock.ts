import type { Clock, Timer } from "./clock.js";

interface FakeTimer {
  readonly due: number;
  readonly seq: number;
  readonly callback: () => void;
  live: boolean;
}

/**
 * A {@link Clock} for unit tests: time stands still until the test moves it.
 * {@link FakeClock.advance} fires the timers that fall due, in order, each at
 * its own instant, and lets promise chains settle after every timer, so code
 * that awaits between timers (a reflector backing off) runs as it would in
 * real time. No real time passes.
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
  private seq = 0;
  private timers: FakeTimer[] = [];

  /** @param startMs - the first reading of {@link FakeClock.now}; default 0 */
  constructor(startMs = 0) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  setTimer(ms: number, callback: () => void): Timer {
    const timer: FakeTimer = { due: this.current + Math.max(0, ms), seq: this.seq++, callback, live: true };
    // Few timers are ever pending: an ordered insert keeps this simple.
    let i = this.timers.length;
    while (i > 0 && this.before(timer, this.timers[i - 1] as FakeTimer)) i--;
    this.timers.splice(i, 0, timer);
    return {
      cancel: () => {
        if (!timer.live) return;
        timer.live = false;
        this.timers = this.timers.filter((t) => t !== timer);
      },
    };
  }

  /** How many timers are waiting to fire. */
  get pendingTimers(): number {
    return this.timers.length;
  }

  /** The delays (from now) of the pending timers, soonest first. */
  pendingDelays(): number[] {
    return this.timers.map((t) => t.due - this.current);
  }

  /** The instant the next timer fires, or `undefined` when none is pending. */
  nextTimerDue(): number | undefined {
    return this.timers[0]?.due;
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

  /** Moves time to the next pending timer and fires it (and any due at the same instant). */
  async advanceToNext(): Promise<void> {
    const due = this.nextTimerDue();
    if (due !== undefined) await this.advance(due - this.current);
    else await this.flush();
  }

  /** Lets every promise chain that needs no real I/O settle: a few turns of the event loop. */
  async flush(): Promise<void> {
    for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  }

  private before(a: FakeTimer, b: FakeTimer): boolean {
    return a.due < b.due || (a.due === b.due && a.seq < b.seq);
  }

  private takeDue(limit: number): FakeTimer | undefined {
    const top = this.timers[0];
    if (!top || top.due > limit) return undefined;
    this.timers.shift();
    top.live = false;
    return top;
  }
}
