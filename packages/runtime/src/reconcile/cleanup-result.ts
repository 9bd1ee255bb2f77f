/**
 * What a `cleanup(object, ctx)` returns: `done` (the runtime removes the
 * finalizer, and the API server deletes the object), or `keep` (the
 * finalizer stays; the object comes back after `requeueAfterMs`, or on its
 * next event when no delay is given). Returning nothing counts as `done`; a
 * throw keeps the finalizer and retries with the controller's backoff, as a
 * failed reconcile does. JOSDK's `DeleteControl`, kube-rs's cleanup `Action`.
 *
 * ```ts
 * async cleanup(webapp: WebApp, ctx: ReconcileContext<WebApp>) {
 *   if (await this.deploymentExists(webapp)) return CleanupResult.keep({ requeueAfterMs: 5_000 });
 *   return CleanupResult.done;
 * }
 * ```
 */
export type CleanupResult =
  { readonly type: "done" } | { readonly type: "keep"; readonly requeueAfterMs?: number | undefined };

/** The two {@link CleanupResult}s. */
export const CleanupResult = Object.freeze({
  /** The cleanup is finished: remove the finalizer. */
  done: Object.freeze<CleanupResult>({ type: "done" }),
  /**
   * Not finished yet (a child still going away, an outside job running):
   * keep the finalizer and come back after `requeueAfterMs`, or on the
   * object's next event (an owned child's deletion is one) without it.
   */
  keep(options: { readonly requeueAfterMs?: number } = {}): CleanupResult {
    const { requeueAfterMs } = options;
    if (requeueAfterMs !== undefined && !(requeueAfterMs >= 0 && Number.isFinite(requeueAfterMs))) {
      throw new RangeError(
        `CleanupResult.keep: requeueAfterMs must be a non-negative number of ms, got ${requeueAfterMs}`,
      );
    }
    return Object.freeze({ type: "keep", requeueAfterMs });
  },
});
