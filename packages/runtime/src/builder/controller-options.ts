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
   * Spaces the retries of a failing request. Default: controller-runtime's
   * (per item exponential from 5 ms to 1000 s, overall 10 per second, burst 100).
   */
  rateLimiter?: RateLimiter<string>;
  /**
   * The longest wait between retries of one failing request, in ms: caps
   * the default rate limiter's per-request backoff (1000 s otherwise), e.g.
   * 30_000 for an operator whose dependencies come back quickly. Not with
   * `rateLimiter` (cap your own there).
   */
  maxBackoffMs?: number;
}
