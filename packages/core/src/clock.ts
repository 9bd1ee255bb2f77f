/** A pending timer started by {@link Clock.setTimer}. */
export interface Timer {
  /** Stops the timer so its callback never runs. Cancelling twice, or after it fired, is harmless. */
  cancel(): void;
}

/**
 * The one source of time in Tessera. Every package takes a clock in its
 * options, so a test injects a `FakeClock` (from `@tessera/core/testing`) and
 * nothing waits for real time.
 *
 * Two scales are kept apart on purpose: {@link Clock.now} is monotonic and
 * measures every duration; {@link Clock.wallTime} only stamps times meant for
 * humans and other hosts (a Lease's `renewTime`) and is never subtracted.
 */
export interface Clock {
  /** Milliseconds on a monotonic scale (fractions allowed); only differences between readings mean anything. */
  now(): number;
  /** The current wall-clock time. */
  wallTime(): Date;
  /**
   * Runs `callback` once, `ms` milliseconds from now (zero or negative: as soon
   * as possible). Any `ms` is honoured, also past `setTimeout`'s 24.8-day limit.
   */
  setTimer(ms: number, callback: () => void): Timer;
}

/** The longest delay `setTimeout` accepts (about 24.8 days); longer waits are chained. */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/** The process clock: `performance.now()`, `new Date()` and `setTimeout`. */
export class SystemClock implements Clock {
  now(): number {
    return performance.now();
  }

  wallTime(): Date {
    return new Date();
  }

  setTimer(ms: number, callback: () => void): Timer {
    let handle: ReturnType<typeof setTimeout> | undefined;
    const due = this.now() + Math.max(0, ms);
    const arm = (wait: number): void => {
      // setTimeout fires at once for delays past its limit; a longer wait sleeps in chunks.
      const chunked = wait > MAX_TIMEOUT_MS;
      handle = setTimeout(
        () => (chunked ? arm(due - this.now()) : callback()),
        Math.min(MAX_TIMEOUT_MS, Math.max(0, Math.ceil(wait))),
      );
    };
    arm(ms);
    return {
      cancel: () => {
        if (handle !== undefined) clearTimeout(handle);
        handle = undefined;
      },
    };
  }
}
