import type { Clock } from "./clock.js";

/** The reason a {@link timeoutScope} aborts with when its time runs out. */
export class TimeoutError extends Error {
  override name = "TimeoutError";
}

/** A signal that aborts when any parent aborts or when time runs out; close it when done. */
export interface AbortScope {
  readonly signal: AbortSignal;
  /** True when the scope aborted because its time ran out. */
  readonly timedOut: boolean;
  /** Cancels the timer and detaches from the parents. Harmless to call twice. */
  close(): void;
}

/**
 * A signal that aborts after `ms` on `clock` (with a {@link TimeoutError}
 * saying `what` timed out) or as soon as any of `parents` aborts, with that
 * parent's reason. Unlike `AbortSignal.timeout` it runs on an injected clock,
 * so a test's fake clock drives it.
 */
export function timeoutScope(
  clock: Clock,
  ms: number,
  what: string,
  parents: ReadonlyArray<AbortSignal | undefined>,
): AbortScope {
  const controller = new AbortController();
  let timedOut = false;
  const listeners: Array<() => void> = [];
  for (const parent of parents) {
    if (!parent) continue;
    if (parent.aborted) {
      controller.abort(parent.reason);
      break;
    }
    const onAbort = (): void => controller.abort(parent.reason);
    parent.addEventListener("abort", onAbort, { once: true });
    listeners.push(() => parent.removeEventListener("abort", onAbort));
  }
  const timer = controller.signal.aborted
    ? undefined
    : clock.setTimer(ms, () => {
        timedOut = true;
        controller.abort(new TimeoutError(`${what} timed out after ${Math.round(ms)} ms`));
      });
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    close() {
      timer?.cancel();
      for (const remove of listeners.splice(0)) remove();
    },
  };
}

/**
 * Resolves when `signal` aborts (at once if it already has); never rejects.
 * For a `run(signal)` that has nothing to do but wait for its stop.
 */
export function whenAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}

/**
 * Settles like `promise`, or rejects with the signal's reason as soon as
 * `signal` aborts, whichever comes first. The promise itself is not
 * cancelled: use it for waits that have no signal of their own.
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(toError(signal.reason));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(toError(signal.reason));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(toError(error));
      },
    );
  });
}

/** `value` if it is an Error, else an Error whose message is its string form (for `reject` and `throw`). */
export function toError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}
