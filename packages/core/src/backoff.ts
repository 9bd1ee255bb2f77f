import type { Clock } from "./clock.js";
import type { RandomSource } from "./random.js";

/** Parameters of a {@link Backoff}; the defaults are client-go's reflector's. */
export interface BackoffOptions {
  /** First delay; default 800 ms. */
  initialMs?: number;
  /** Each delay is the previous times this; default 2. */
  factor?: number;
  /** The un-jittered delay never exceeds this; default 30 s. */
  maxMs?: number;
  /** Each delay d becomes d + random(0, jitter * d); default 1.0. */
  jitter?: number;
  /** After this long without a failure the next delay starts from `initialMs` again; default 2 min. */
  resetAfterMs?: number;
}

/**
 * Exponential backoff with jitter and reset, as client-go's reflector backs
 * off: 800 ms, 1.6 s, 3.2 s, ... up to 30 s, each plus up to as much again at
 * random, and back to 800 ms once two minutes passed since the last failure.
 */
export class Backoff {
  private readonly initialMs: number;
  private readonly factor: number;
  private readonly maxMs: number;
  private readonly jitter: number;
  private readonly resetAfterMs: number;
  private nextBaseMs: number;
  private lastFailureAt: number | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly random: RandomSource,
    options: BackoffOptions = {},
  ) {
    this.initialMs = options.initialMs ?? 800;
    this.factor = options.factor ?? 2;
    this.maxMs = options.maxMs ?? 30_000;
    this.jitter = options.jitter ?? 1.0;
    this.resetAfterMs = options.resetAfterMs ?? 120_000;
    this.nextBaseMs = this.initialMs;
  }

  /** Records a failure now and returns how long to wait before the next attempt. */
  next(): number {
    const now = this.clock.now();
    if (this.lastFailureAt !== undefined && now - this.lastFailureAt > this.resetAfterMs) {
      this.nextBaseMs = this.initialMs;
    }
    this.lastFailureAt = now;
    const base = Math.min(this.nextBaseMs, this.maxMs);
    this.nextBaseMs = Math.min(this.nextBaseMs * this.factor, this.maxMs);
    return this.jitter > 0 ? base + this.random() * this.jitter * base : base;
  }

  /** Forgets past failures: the next delay is the initial one. */
  reset(): void {
    this.nextBaseMs = this.initialMs;
    this.lastFailureAt = undefined;
  }
}
