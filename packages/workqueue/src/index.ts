/**
 * @tessera/workqueue: the deduplicating, rate-limited queue between informers
 * and reconcilers (client-go's guarantees), and the worker pool that runs the
 * reconciles with controller-runtime's retry rules, metrics and graceful stop.
 */
export { WorkQueue } from "./work-queue.js";
export type { WorkQueueOptions, WorkQueueStats } from "./work-queue.js";
export { NORMAL_PRIORITY, LOW_PRIORITY } from "./priority.js";
export type { AddOptions } from "./priority.js";
export { WorkerPool } from "./worker-pool.js";
export type { WorkContext } from "./in-flight-work.js";
export type {
  WorkResult,
  WorkHandler,
  WorkerPoolOptions,
  WorkerPoolOutcome,
  WorkerPoolRunOptions,
} from "./worker-pool.js";
export { WorkItemError, WorkItemTimeoutError, WorkerPoolStoppedError } from "./work-item-error.js";
export { TerminalError, isTerminalError } from "./terminal-error.js";
export { RequeueAfterError } from "./requeue-after-error.js";
export type { RateLimiter } from "./rate-limiter.js";
export { ExponentialFailureRateLimiter } from "./exponential-failure-rate-limiter.js";
export type { ExponentialFailureRateLimiterOptions } from "./exponential-failure-rate-limiter.js";
export { BucketRateLimiter } from "./bucket-rate-limiter.js";
export type { BucketRateLimiterOptions } from "./bucket-rate-limiter.js";
export { MaxOfRateLimiter } from "./max-of-rate-limiter.js";
export { FastSlowRateLimiter } from "./fast-slow-rate-limiter.js";
export type { FastSlowRateLimiterOptions } from "./fast-slow-rate-limiter.js";
export { defaultControllerRateLimiter } from "./default-rate-limiter.js";
export type { DefaultControllerRateLimiterOptions } from "./default-rate-limiter.js";
export { delayGranularityMs, bucketFireTime } from "./delay-granularity.js";
