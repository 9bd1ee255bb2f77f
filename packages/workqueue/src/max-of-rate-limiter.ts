import type { RateLimiter } from "./rate-limiter.js";

/**
 * Combines rate limiters: every one of them records the failure, and the
 * longest of their delays wins. `numRequeues` is the largest count among them,
 * `forget` forgets in all of them.
 */
export class MaxOfRateLimiter<T> implements RateLimiter<T> {
  private readonly limiters: readonly RateLimiter<T>[];

  constructor(...limiters: RateLimiter<T>[]) {
    if (limiters.length === 0) throw new RangeError("MaxOfRateLimiter: needs at least one rate limiter");
    this.limiters = limiters;
  }

  when(item: T): number {
    let longest = 0;
    for (const limiter of this.limiters) longest = Math.max(longest, limiter.when(item));
    return longest;
  }

  forget(item: T): void {
    for (const limiter of this.limiters) limiter.forget(item);
  }

  numRequeues(item: T): number {
    let most = 0;
    for (const limiter of this.limiters) most = Math.max(most, limiter.numRequeues(item));
    return most;
  }
}
