/**
 * What a reconciler's `onError(error, object, ctx)` decides for an error
 * it recognises (kube-rs's `error_policy`): retry after a delay of its
 * choosing, or give up (terminal: the key's backoff is forgotten, the
 * failure is logged once, and only a new event brings the object back).
 * Nothing (`undefined`) leaves the error to the controller's rate limiter,
 * as for every error when there is no `onError`.
 *
 * ```ts
 * onError(error: unknown) {
 *   if (error instanceof QuotaExceededError) return ErrorResult.requeueAfter(60_000);
 *   if (error instanceof InvalidSpecError) return ErrorResult.terminal;
 *   return undefined; // the rate limiter's backoff
 * }
 * ```
 */
export type ErrorResult =
  | void
  | undefined
  | { readonly type: "requeue"; readonly requeueAfterMs: number }
  | { readonly type: "terminal" };

/** The {@link ErrorResult}s besides `undefined`. */
export const ErrorResult = Object.freeze({
  /** Retry after `ms` (more than zero) instead of the rate limiter's delay. */
  requeueAfter(ms: number): ErrorResult {
    if (!(ms > 0 && Number.isFinite(ms))) {
      throw new RangeError(`ErrorResult.requeueAfter: the delay must be a positive number of ms, got ${ms}`);
    }
    return Object.freeze({ type: "requeue", requeueAfterMs: ms });
  },
  /** Retrying cannot help: stop until the object changes (as throwing a `TerminalError` does). */
  terminal: Object.freeze<ErrorResult>({ type: "terminal" }),
});
