import type { RateLimiter } from "./rate-limiter.js";

/** Options for {@link ExponentialFailureRateLimiter}. */
export interface ExponentialFailureRateLimiterOptions {
  /** The delay after the first failure, in ms; default 5. */
  baseDelayMs?: number;
  /** The delay never exceeds this, in ms; default 1,000,000 (1000 s). */
  maxDelayMs?: number;
}

/**
 * Per-item exponential backoff: the n-th consecutive failure of an item waits
 * `baseDelayMs * 2^(n-1)`, capped at `maxDelayMs`. With the defaults that is
 * 5 ms, 10 ms, 20 ms, ... reaching the 1000 s cap at the 19th failure.
 */
export class ExponentialFailureRateLimiter<T> implements RateLimiter<T> {
  private readonly failures = new Map<T, number>();
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;

  constructor(options: ExponentialFailureRateLimiterOptions = {}) {
    this.baseDelayMs = options.baseDelayMs ?? 5;
    this.maxDelayMs = options.maxDelayMs ?? 1_000_000;
    if (!(this.baseDelayMs >= 0) || !(this.maxDelayMs >= 0)) {
      throw new RangeError(
        `ExponentialFailureRateLimiter: delays must be non-negative, got base ${this.baseDelayMs} ms and max ${this.maxDelayMs} ms`,
      );
    }
  }

  when(item: T): number {
    const exponent = this.failures.get(item) ?? 0;
    this.failures.set(item, exponent + 1);
    const backoff = this.baseDelayMs * 2 ** exponent;
    return Number.isFinite(backoff) && backoff < this.maxDelayMs ? backoff : this.maxDelayMs;
  }

  forget(item: T): void {
    this.failures.delete(item);
  }

  numRequeues(item: T): number {
    return this.failures.get(item) ?? 0;
  }
}
