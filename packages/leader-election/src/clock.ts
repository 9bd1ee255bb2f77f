/** A pending timer started by {@link Clock.setTimer}. */
export interface Timer {
  /** Stops the timer; its callback will not run. Cancelling twice is harmless. */
  cancel(): void;
}

/**
 * The source of time for a {@link LeaderElector}.
 *
 * Two scales are kept apart on purpose. {@link Clock.now} is a monotonic
 * millisecond counter used for every duration the elector judges (how long a
 * record has been observed unchanged, how long since the last renewal).
 * {@link Clock.wallTime} is used only to stamp `acquireTime` and `renewTime`
 * on the Lease for humans and tools; the elector never compares another
 * host's timestamps with its own clock.
 */
export interface Clock {
  /** Milliseconds on a monotonic scale; only differences between two readings mean anything. */
  now(): number;
  /** The current wall-clock time. */
  wallTime(): Date;
  /** Runs `callback` once, `ms` milliseconds from now. */
  setTimer(ms: number, callback: () => void): Timer;
}

/** The process clock: `performance.now()`, `new Date()` and `setTimeout`. */
export class SystemClock implements Clock {
  now(): number {
    return performance.now();
  }

  wallTime(): Date {
    return new Date();
  }

  setTimer(ms: number, callback: () => void): Timer {
    const handle = setTimeout(callback, Math.max(0, ms));
    return { cancel: () => clearTimeout(handle) };
  }
}
