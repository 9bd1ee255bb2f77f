import type { Clock } from "./clock.js";

/** The reason a {@link timeoutScope} aborts with when its time runs out. */
export class TimeoutError extends Error {
  override name = "TimeoutError";
}

/** A signal that aborts when any parent aborts or when time runs out; dispose it when done. */
export interface AbortScope {
  readonly signal: AbortSignal;
  /** True when the scope aborted because its time ran out. */
  readonly timedOut: boolean;
  dispose(): void;
}

/**
 * A signal that aborts after `ms` on `clock` (with a {@link TimeoutError}
 * saying `what` timed out) or as soon as any of `parents` aborts.
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
    const onAbort = () => controller.abort(parent.reason);
    parent.addEventListener("abort", onAbort, { once: true });
    listeners.push(() => parent.removeEventListener("abort", onAbort));
  }
  const timer = clock.setTimer(ms, () => {
    timedOut = true;
    controller.abort(new TimeoutError(`${what} timed out after ${Math.round(ms)} ms`));
  });
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    dispose() {
      timer.cancel();
      for (const remove of listeners) remove();
    },
  };
}

/** Resolves after `ms` on `clock`, or as soon as any of `signals` aborts (it never rejects). */
export function delay(
  clock: Clock,
  ms: number,
  signals: ReadonlyArray<AbortSignal | undefined>,
): Promise<void> {
  return new Promise((resolve) => {
    const scope = timeoutScope(clock, ms, "delay", signals);
    if (scope.signal.aborted) {
      scope.dispose();
      resolve();
      return;
    }
    scope.signal.addEventListener(
      "abort",
      () => {
        scope.dispose();
        resolve();
      },
      { once: true },
    );
  });
}
