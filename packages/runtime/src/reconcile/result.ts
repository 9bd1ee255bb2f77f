/**
 * What a reconcile returns: nothing when the object is where it should be
 * (the next event wakes the controller again), or a requeue after a delay
 * (polling something outside the cluster, a timed step). To retry after a
 * failure, throw: the work queue's rate limiter then spaces the attempts.
 */
export type Result = void | undefined | { readonly requeueAfterMs: number };
