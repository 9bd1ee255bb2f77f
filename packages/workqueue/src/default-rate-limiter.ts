import type { Instrumentation } from "@tessera/core";
import { BucketRateLimiter } from "./bucket-rate-limiter.js";
import { ExponentialFailureRateLimiter } from "./exponential-failure-rate-limiter.js";
import { MaxOfRateLimiter } from "./max-of-rate-limiter.js";
import type { RateLimiter } from "./rate-limiter.js";

/** What may be changed of {@link defaultControllerRateLimiter}. */
export interface DefaultControllerRateLimiterOptions {
  /** The cap of the per-item backoff, in ms; default 1,000,000 (1000 s). */
  maxDelayMs?: number;
}

/**
 * The rate limiter controllers get by default, the same as controller-runtime's:
 * the longer of a per-item exponential backoff (5 ms doubling up to 1000 s)
 * and an overall token bucket (10 retries per second, bursts of 100). The
 * bucket refills on `options.clock`; `options.maxDelayMs` lowers the cap of the backoff.
 */
export function defaultControllerRateLimiter<T>(
  options: Instrumentation & DefaultControllerRateLimiterOptions = {},
): RateLimiter<T> {
  const { maxDelayMs = 1_000_000, ...instrumentation } = options;
  return new MaxOfRateLimiter<T>(
    new ExponentialFailureRateLimiter<T>({ baseDelayMs: 5, maxDelayMs }),
    new BucketRateLimiter<T>({ ...instrumentation, qps: 10, burst: 100 }),
  );
}
