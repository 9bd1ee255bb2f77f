/**
 * Thrown by a handler to retry a failed item after a delay it chose,
 * instead of the rate limiter's (kube-rs's `error_policy` returning
 * `Action::requeue`). The worker pool counts it as a failure, reports it
 * to `onError` with `cause` as the error, and adds the item back after
 * `requeueAfterMs`; the rate limiter's history of the item is neither
 * advanced nor forgotten, so a later plain throw backs off from where it
 * was.
 *
 * ```ts
 * throw new RequeueAfterError(30_000, { cause: error }); // the quota resets every 30 s
 * ```
 */
export class RequeueAfterError extends Error {
  override readonly name = "RequeueAfterError";

  constructor(
    /** When to process the item again, in ms; more than zero. */
    readonly requeueAfterMs: number,
    options: { cause: unknown },
  ) {
    if (!(requeueAfterMs > 0 && Number.isFinite(requeueAfterMs))) {
      throw new RangeError(
        `RequeueAfterError: requeueAfterMs must be a positive number of ms, got ${requeueAfterMs}`,
      );
    }
    const cause = options.cause;
    super(
      `${cause instanceof Error ? cause.message : String(cause)} (retried in ${requeueAfterMs} ms)`,
      options,
    );
  }
}
