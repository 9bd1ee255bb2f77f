import { resolveInstrumentation, type Clock, type Instrumentation } from "@tessera/core";
import type { RateLimiter } from "./rate-limiter.js";

/** Options for {@link BucketRateLimiter}; of the instrumentation it uses only the `clock`. */
export interface BucketRateLimiterOptions extends Instrumentation {
  /** Tokens added per second; default 10. */
  qps?: number;
  /** The bucket's size, and its content at the start; default 100. */
  burst?: number;
}

/**
 * A token bucket shared by all items: it starts full with `burst` tokens and
 * refills at `qps` tokens per second up to `burst`. Each retry takes a token;
 * when none is left the retry is booked against a future token and waits
 * until it arrives, so a storm of retries is spread out at `qps`. It keeps no
 * per-item state: `numRequeues` is always 0 and `forget` does nothing.
 */
export class BucketRateLimiter<T> implements RateLimiter<T> {
  private readonly qps: number;
  private readonly burst: number;
  private readonly clock: Clock;
  /** May go negative: tokens already promised to waiting retries. */
  private tokens: number;
  private last: number;

  constructor(options: BucketRateLimiterOptions = {}) {
    this.qps = options.qps ?? 10;
    this.burst = options.burst ?? 100;
    if (!(this.qps > 0) || !(this.burst >= 1)) {
      throw new RangeError(
        `BucketRateLimiter: need qps > 0 and burst >= 1, got qps ${this.qps}, burst ${this.burst}`,
      );
    }
    this.clock = resolveInstrumentation(options, "@tessera/workqueue").clock;
    this.tokens = this.burst;
    this.last = this.clock.now();
  }

  when(_item: T): number {
    const now = this.clock.now();
    // A clock that went backwards adds nothing and does not move `last` back.
    if (now > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.qps) / 1000);
      this.last = now;
    }
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens * 1000) / this.qps;
  }

  forget(_item: T): void {}

  numRequeues(_item: T): number {
    return 0;
  }
}
