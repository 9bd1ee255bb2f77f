import type { Clock } from "@tessera/core";

/** Options of a {@link DecisionCache}. */
export interface DecisionCacheOptions {
  clock: Clock;
  /** The most entries kept; the oldest goes first. Default 4096. */
  maxEntries?: number;
}

/**
 * Decisions of the API server kept for a while, as kube-rbac-proxy and
 * controller-runtime's metrics filter keep theirs, so a Prometheus scraping
 * every few seconds costs a review now and then rather than two per scrape.
 * Each entry lives for the TTL it was set with (an allow may live longer
 * than a deny). Bounded, so tokens made up by a caller cannot grow it
 * without end. Keys should not be secrets: callers hash tokens first.
 */
export class DecisionCache<V> {
  private readonly clock: Clock;
  private readonly maxEntries: number;
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();

  constructor(options: DecisionCacheOptions) {
    this.clock = options.clock;
    this.maxEntries = options.maxEntries ?? 4096;
    if (!Number.isInteger(this.maxEntries) || this.maxEntries < 1) {
      throw new RangeError(`DecisionCache: maxEntries must be a positive integer, got ${options.maxEntries}`);
    }
  }

  /** The decision stored under `key`, unless it expired. */
  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (this.clock.now() >= entry.expiresAt) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** Stores `value` under `key` for `ttlMs`; a TTL of 0 or less stores nothing. */
  set(key: string, value: V, ttlMs: number): void {
    this.entries.delete(key);
    if (ttlMs <= 0) return;
    if (this.entries.size >= this.maxEntries) this.evict();
    this.entries.set(key, { value, expiresAt: this.clock.now() + ttlMs });
  }

  /** How many entries are held (expired ones included until read or evicted). */
  get size(): number {
    return this.entries.size;
  }

  /** Drops the expired entries, then, if still full, the oldest one. */
  private evict(): void {
    const now = this.clock.now();
    for (const [key, entry] of this.entries) if (now >= entry.expiresAt) this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }
}
