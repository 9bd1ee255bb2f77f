/**
 * Tessera's one lifecycle. Everything long-lived (a reflector, an informer,
 * a worker pool, a leader elector, a ring member, the manager) is a
 * `Runnable`: `run(signal)` starts it and the promise settles once it has
 * stopped, everything it started included. Aborting the signal is how it is
 * stopped; there is no separate `stop()`. A run that fails for good rejects.
 *
 * Where a graceful stop needs more than an abort, the method is `drain()`
 * everywhere (a work queue finishing what was handed out). Waiting for a
 * cache is `waitForSync(signal)` ({@link Syncable}).
 */
export interface Runnable<R = void> {
  /**
   * Starts; settles when stopped: resolves after `signal` aborted and
   * everything started has ended (with a result `R` where stopping has an
   * outcome worth reporting, such as why leadership ended).
   */
  run(signal: AbortSignal): Promise<R>;
}

/** A cache that fills from the API server: one contract for reflectors, informers and their factory. */
export interface Syncable {
  /** True once the first complete snapshot was cached (and, for an informer, handed to its handlers). */
  hasSynced(): boolean;
  /**
   * Resolves `true` once synced, or `false` when `signal` aborts or the cache
   * stops first. Never rejects.
   */
  waitForSync(signal?: AbortSignal): Promise<boolean>;
}
