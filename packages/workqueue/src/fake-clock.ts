import type { Clock, Timer } from "./clock.js";
import { MinHeap } from "./min-heap.js";

interface FakeTimer {
  readonly due: number;
  readonly seq: number;
  readonly callback: () => void;
  cancelled: boolean;
}

/**
 * A {@link Clock} for unit tests: time stands still until the test moves it.
 * {@link FakeClock.advanceSync} fires the timers that fall due, in order, each
 * at its own instant; {@link FakeClock.advance} does the same and lets promise
 * chains settle after every timer, for code that awaits between timers (the
 * worker pool). No real time passes.
 *
 * ```ts
 * const clock = new FakeClock();
 * const queue = new WorkQueue<string>({ clock });
 * queue.addAfter("default/a", 1_500);
 * clock.advanceSync(2_000); // "default/a" is now ready
 * ```
 */
export class FakeClock implements Clock {
  private current: number;
  private seq = 0;
  private readonly timers = new MinHeap<FakeTimer>(
    (a, b) => a.due < b.due || (a.due === b.due && a.seq < b.seq),
  );
  private live = 0;

  /** @param startMs - the first reading of {@link FakeClock.now}; default 0 */
  constructor(startMs = 0) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  setTimer(ms: number, callback: () => void): Timer {
    const timer: FakeTimer = {
      due: this.current + Math.max(0, ms),
      seq: this.seq++,
      callback,
      cancelled: false,
    };
    this.timers.push(timer);
    this.live++;
    return {
      cancel: () => {
        if (timer.cancelled) return;
        timer.cancelled = true;
        this.live--;
      },
    };
  }

  /** How many timers are waiting to fire. */
  get pendingTimers(): number {
    return this.live;
  }

  /** The instant the next live timer fires, or `undefined` when none is pending. */
  nextTimerDue(): number | undefined {
    this.dropCancelled();
    return this.timers.peek()?.due;
  }

  /**
   * Moves time forward by `ms`, firing each timer that falls due on the way at
   * its own instant, in order (timers started by those callbacks included).
   */
  advanceSync(ms: number): void {
    const target = this.current + Math.max(0, ms);
    for (let timer = this.takeDue(target); timer; timer = this.takeDue(target)) {
      this.current = Math.max(this.current, timer.due);
      timer.callback();
    }
    this.current = target;
  }

  /**
   * Like {@link FakeClock.advanceSync}, and lets every promise chain that can
   * make progress without time passing settle before, between and after the
   * timers.
   */
  async advance(ms: number): Promise<void> {
    const target = this.current + Math.max(0, ms);
    await this.flush();
    for (let timer = this.takeDue(target); timer; timer = this.takeDue(target)) {
      this.current = Math.max(this.current, timer.due);
      timer.callback();
      await this.flush();
    }
    this.current = target;
    await this.flush();
  }

  /**
   * Runs pending promise callbacks: a few turns of the event loop, which settle
   * any chain of promises that does no real I/O.
   */
  async flush(): Promise<void> {
    for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  }

  private takeDue(limit: number): FakeTimer | undefined {
    this.dropCancelled();
    const top = this.timers.peek();
    if (!top || top.due > limit) return undefined;
    this.timers.pop();
    top.cancelled = true;
    this.live--;
    return top;
  }

  private dropCancelled(): void {
    while (this.timers.peek()?.cancelled) this.timers.pop();
  }
}
