import type { Attributes, Counter, Histogram, Meter } from "@opentelemetry/api";

/** Seconds: 1 ms to ~17 min, for list and initial-sync durations. */
const DURATION_BUCKETS_SECONDS = [
  0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 1000,
];

/**
 * How a collection was (re)synced: one watch-list stream, LIST + WATCH, or
 * `resumed`: not synced by this reflector at all, but taken as complete at
 * the `resumeFrom` resourceVersion it was given.
 */
export type SyncMode = "watch-list" | "list" | "resumed";

/**
 * The reflector's OpenTelemetry instruments. Every data point carries
 * `reflector` (its name) and `resource`:
 *
 * - `tessera_reflector_lists_total` {result}: LIST calls (whole paginated lists)
 * - `tessera_reflector_list_pages_total`: LIST requests (pages)
 * - `tessera_reflector_watches_total` {mode}: WATCH requests opened (`watch-list` or `watch`)
 * - `tessera_reflector_watchlist_fallbacks_total` {reason}: watch-list attempts that fell back to LIST + WATCH
 * - `tessera_reflector_relists_total` {reason}: completed syncs after the first (`expired` after a 410, `error` after another failure)
 * - `tessera_reflector_events_total` {type}: watch events received (ADDED, MODIFIED, DELETED, BOOKMARK)
 * - `tessera_reflector_bookmarks_total`: bookmarks received (the initial-events-end one included)
 * - `tessera_reflector_errors_total` {verb, reason}: failed lists and watches
 * - `tessera_reflector_list_duration_seconds` (histogram): whole LIST durations
 * - `tessera_reflector_initial_sync_duration_seconds` {mode} (histogram): from the first request of a sync to the store replaced
 * - `tessera_reflector_consistency_check_failures_total`: watch-list snapshots that differed from a LIST
 */
export class ReflectorMetrics {
  private readonly base: Attributes;
  private readonly lists: Counter;
  private readonly listPages: Counter;
  private readonly watches: Counter;
  private readonly fallbacks: Counter;
  private readonly relists: Counter;
  private readonly events: Counter;
  private readonly bookmarks: Counter;
  private readonly errors: Counter;
  private readonly consistencyFailures: Counter;
  private readonly listDuration: Histogram;
  private readonly initialSyncDuration: Histogram;
  private readonly eventAttributes: Record<string, Attributes>;

  constructor(meter: Meter, reflector: string, resource: string) {
    this.base = Object.freeze({ reflector, resource });
    this.lists = meter.createCounter("tessera_reflector_lists_total", {
      description: "LISTs of whole collections",
    });
    this.listPages = meter.createCounter("tessera_reflector_list_pages_total", {
      description: "LIST requests, one per page",
    });
    this.watches = meter.createCounter("tessera_reflector_watches_total", {
      description: "WATCH requests opened",
    });
    this.fallbacks = meter.createCounter("tessera_reflector_watchlist_fallbacks_total", {
      description: "Watch-list syncs that fell back to LIST + WATCH",
    });
    this.relists = meter.createCounter("tessera_reflector_relists_total", {
      description: "Syncs of the whole collection after the first",
    });
    this.events = meter.createCounter("tessera_reflector_events_total", {
      description: "Watch events received",
    });
    this.bookmarks = meter.createCounter("tessera_reflector_bookmarks_total", {
      description: "Bookmarks received",
    });
    this.errors = meter.createCounter("tessera_reflector_errors_total", {
      description: "Failed lists and watches",
    });
    this.consistencyFailures = meter.createCounter("tessera_reflector_consistency_check_failures_total", {
      description: "Watch-list snapshots that differed from a LIST at the same resourceVersion",
    });
    const histogram = { unit: "s", advice: { explicitBucketBoundaries: DURATION_BUCKETS_SECONDS } };
    this.listDuration = meter.createHistogram("tessera_reflector_list_duration_seconds", {
      description: "Duration of whole LISTs",
      ...histogram,
    });
    this.initialSyncDuration = meter.createHistogram("tessera_reflector_initial_sync_duration_seconds", {
      description: "From the first request of a sync to the store replaced",
      ...histogram,
    });
    this.eventAttributes = {};
    for (const type of ["ADDED", "MODIFIED", "DELETED", "BOOKMARK"]) {
      this.eventAttributes[type] = Object.freeze({ ...this.base, type });
    }
  }

  list(result: "success" | "error", seconds: number, pages: number): void {
    this.lists.add(1, { ...this.base, result });
    this.listPages.add(pages, this.base);
    if (result === "success") this.listDuration.record(seconds, this.base);
  }

  watch(mode: "watch-list" | "watch"): void {
    this.watches.add(1, { ...this.base, mode });
  }

  fallback(reason: string): void {
    this.fallbacks.add(1, { ...this.base, reason });
  }

  relist(reason: string): void {
    this.relists.add(1, { ...this.base, reason });
  }

  event(type: string): void {
    this.events.add(1, this.eventAttributes[type] ?? { ...this.base, type });
    if (type === "BOOKMARK") this.bookmarks.add(1, this.base);
  }

  error(verb: "list" | "watch", reason: string): void {
    this.errors.add(1, { ...this.base, verb, reason });
  }

  synced(mode: SyncMode, seconds: number): void {
    this.initialSyncDuration.record(seconds, { ...this.base, mode });
  }

  consistencyFailure(): void {
    this.consistencyFailures.add(1, this.base);
  }
}
