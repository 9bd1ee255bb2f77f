/** A pending timer started by {@link Clock.setTimer}. */
export interface Timer {
  /** Stops the timer so its callback never runs. Cancelling twice, or after it fired, is harmless. */
  cancel(): void;
}

/**
 * The reflector's source of time: backoff waits, watch inactivity and
 * initial-events deadlines, durations in metrics. Inject a {@link FakeClock}
 * in tests so that nothing waits for real time.
 */
export interface Clock {
  /** Milliseconds on a monotonic scale (fractions allowed); only differences between readings mean anything. */
  now(): number;
  /** Runs `callback` once, `ms` milliseconds from now (zero or negative: as soon as possible). */
  setTimer(ms: number, callback: () => void): Timer;
}

/** The longest delay `setTimeout` accepts; longer waits are chained. */
const MAX_TIMEOUT_MS = 2_147_483_647;

/** The process clock: `performance.now()` and `setTimeout` (unref'd timers never keep a process alive). */
export class SystemClock implements Clock {
  now(): number {
    return performance.now();
  }

  setTimer(ms: number, callback: () => void): Timer {
    let handle: ReturnType<typeof setTimeout> | undefined;
    const due = this.now() + Math.max(0, ms);
    const arm = (wait: number): void => {
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

/**
 * Resolves after `ms` on `clock`, or as soon as `signal` aborts (then it
 * resolves too: callers check `signal.aborted`). Never rejects.
 */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      timer.cancel();
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = clock.setTimer(ms, done);
    signal?.addEventListener("abort", done, { once: true });
  });
}
