import type { Instrumentation } from "@tessera/core";
import { BucketRateLimiter } from "./bucket-rate-limiter.js";
import { ExponentialFailureRateLimiter } from "./exponential-failure-rate-limiter.js";
import { MaxOfRateLimiter } from "./max-of-rate-limiter.js";
import type { RateLimiter } from "./rate-limiter.js";

/**
 * The rate limiter controllers get by default, the same as controller-runtime's:
 * the longer of a per-item exponential backoff (5 ms doubling up to 1000 s)
 * and an overall token bucket (10 retries per second, bursts of 100). The
 * bucket refills on `options.clock`.
 */
export function defaultControllerRateLimiter<T>(options: Instrumentation = {}): RateLimiter<T> {
  return new MaxOfRateLimiter<T>(
    new ExponentialFailureRateLimiter<T>({ baseDelayMs: 5, maxDelayMs: 1_000_000 }),
    new BucketRateLimiter<T>({ ...options, qps: 10, burst: 100 }),
  );
}
