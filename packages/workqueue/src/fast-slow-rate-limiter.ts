import type { RateLimiter } from "./rate-limiter.js";

/** Options for {@link FastSlowRateLimiter}. */
export interface FastSlowRateLimiterOptions {
  /** The delay of the first `maxFastAttempts` retries, in ms. */
  fastDelayMs: number;
  /** The delay of every later retry, in ms. */
  slowDelayMs: number;
  /** How many retries of an item use the fast delay. */
  maxFastAttempts: number;
}

/** Retries an item quickly a few times, then slowly: a fixed fast delay for the first attempts, a fixed slow one after. */
export class FastSlowRateLimiter<T> implements RateLimiter<T> {
  private readonly failures = new Map<T, number>();

  constructor(private readonly options: FastSlowRateLimiterOptions) {
    const { fastDelayMs, slowDelayMs, maxFastAttempts } = options;
    if (!(fastDelayMs >= 0) || !(slowDelayMs >= 0) || !(maxFastAttempts >= 0)) {
      throw new RangeError(
        `FastSlowRateLimiter: options must be non-negative, got fast ${fastDelayMs} ms, slow ${slowDelayMs} ms, ${maxFastAttempts} fast attempts`,
      );
    }
  }

  when(item: T): number {
    const attempts = (this.failures.get(item) ?? 0) + 1;
    this.failures.set(item, attempts);
    return attempts <= this.options.maxFastAttempts ? this.options.fastDelayMs : this.options.slowDelayMs;
  }

  forget(item: T): void {
    this.failures.delete(item);
  }

  numRequeues(item: T): number {
    return this.failures.get(item) ?? 0;
  }
}
