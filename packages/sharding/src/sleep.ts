import type { Clock } from "@tessera/leader-election";

/** Resolves after `ms` on `clock`, or at once when `signal` aborts; never rejects. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      timer.cancel();
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = clock.setTimer(ms, done);
    signal?.addEventListener("abort", done, { once: true });
  });
}
