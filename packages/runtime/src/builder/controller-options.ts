import type { RateLimiter } from "@tessera/workqueue";
import type { ControllerMode } from "../config/manager-config.js";

/** How one controller runs; absent fields take the manager configuration's values, then the defaults. */
export interface ControllerOptions {
  /**
   * `leader` (the default): only the elected replica reconciles; the others
   * keep their caches warm. `sharded`: every replica reconciles the objects
   * of its slots in the controller's ring. `every-replica`: every replica
   * reconciles everything (per-node work).
   */
  mode?: ControllerMode;
  /** Reconciles at once (controller-runtime's MaxConcurrentReconciles). Default 1. */
  concurrency?: number;
  /** How long one reconcile may run before its signal aborts and it counts as failed. Default: no limit. */
  reconcileTimeoutMs?: number;
  /**
   * The resync floor: every object of the primary kind is reconciled at
   * least once per this many ms, even when nothing about it changed (a
   * drift the controller does not watch, an event it missed, a clock it
   * waits on). Default 36,000,000 (10 h), as controller-runtime's
   * `SyncPeriod` and JOSDK's `maxReconciliationInterval`; 0 turns it off.
   *
   * Spread over time: the primary informer re-delivers each object once per
   * period on its bucketed resync (one timer for every informer of the
   * process, objects filed in one-second buckets, each object's first
   * deadline drawn uniformly over the period), so a collection is resynced
   * at an even rate, never in a burst at the period, and no timer runs per
   * object. A resync passes the predicates (`generationChanged` would
   * otherwise drop it) and queues behind live events. The period is counted
   * from the last resync, not from the last reconcile: an object reconciled
   * for an event is still resynced on its schedule.
   */
  maxIntervalMs?: number;
  /**
   * Spaces the retries of a failing request. Default: controller-runtime's
   * (per item exponential from 5 ms to 1000 s, overall 10 per second, burst 100).
   */
  rateLimiter?: RateLimiter<string>;
  /**
   * The longest wait between retries of one failing request, in ms: caps
   * the default rate limiter's per-request backoff (1000 s otherwise), e.g.
   * 30_000 for an operator whose dependencies come back quickly. Not with
   * `rateLimiter` (cap your own there). The configuration's
   * `controllers.<name>.maxBackoffMs` wins over it.
   */
  maxBackoffMs?: number;
}
