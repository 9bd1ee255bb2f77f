import type { Clock } from "./clock.js";

/**
 * Resolves after `ms` on `clock`, or as soon as `signal` aborts (then it
 * resolves too: callers check `signal.aborted`). Never rejects, so a loop that
 * sleeps between attempts needs no try/catch around its waits.
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
