import type { Meter } from "@opentelemetry/api";
import { MetricGroup, type GroupCounter, type GroupHistogram } from "@tessera/core";

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

/** The watch event types, each with a counter bound once (events are the hot path). */
const EVENT_TYPES = ["ADDED", "MODIFIED", "DELETED", "BOOKMARK"] as const;

type BoundCounter = { add(value?: number): void };

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
 *
 * There are no gauges, so nothing needs unregistering when a reflector stops.
 * Internal to the package.
 */
export class ReflectorMetrics {
  private readonly lists: GroupCounter;
  private readonly listPages: GroupCounter;
  private readonly watches: GroupCounter;
  private readonly fallbacks: GroupCounter;
  private readonly relists: GroupCounter;
  private readonly events: GroupCounter;
  private readonly bookmarks: GroupCounter;
  private readonly errors: GroupCounter;
  private readonly consistencyFailures: GroupCounter;
  private readonly listDuration: GroupHistogram;
  private readonly initialSyncDuration: GroupHistogram;
  private readonly eventCounters: ReadonlyMap<string, BoundCounter>;

  constructor(meter: Meter, reflector: string, resource: string) {
    const group = new MetricGroup(meter, { reflector, resource });
    this.lists = group.counter("tessera_reflector_lists_total", "LISTs of whole collections");
    this.listPages = group.counter("tessera_reflector_list_pages_total", "LIST requests, one per page");
    this.watches = group.counter("tessera_reflector_watches_total", "WATCH requests opened");
    this.fallbacks = group.counter(
      "tessera_reflector_watchlist_fallbacks_total",
      "Watch-list syncs that fell back to LIST + WATCH",
    );
    this.relists = group.counter(
      "tessera_reflector_relists_total",
      "Syncs of the whole collection after the first",
    );
    this.events = group.counter("tessera_reflector_events_total", "Watch events received");
    this.bookmarks = group.counter("tessera_reflector_bookmarks_total", "Bookmarks received");
    this.errors = group.counter("tessera_reflector_errors_total", "Failed lists and watches");
    this.consistencyFailures = group.counter(
      "tessera_reflector_consistency_check_failures_total",
      "Watch-list snapshots that differed from a LIST at the same resourceVersion",
    );
    const histogram = { unit: "s", buckets: DURATION_BUCKETS_SECONDS };
    this.listDuration = group.histogram(
      "tessera_reflector_list_duration_seconds",
      "Duration of whole LISTs",
      histogram,
    );
    this.initialSyncDuration = group.histogram(
      "tessera_reflector_initial_sync_duration_seconds",
      "From the first request of a sync to the store replaced",
      histogram,
    );
    this.eventCounters = new Map(EVENT_TYPES.map((type) => [type, this.events.bind({ type })]));
  }

  list(result: "success" | "error", seconds: number, pages: number): void {
    this.lists.add(1, { result });
    this.listPages.add(pages);
    if (result === "success") this.listDuration.record(seconds);
  }

  watch(mode: "watch-list" | "watch"): void {
    this.watches.add(1, { mode });
  }

  fallback(reason: string): void {
    this.fallbacks.add(1, { reason });
  }

  relist(reason: string): void {
    this.relists.add(1, { reason });
  }

  event(type: string): void {
    const counter = this.eventCounters.get(type);
    if (counter) counter.add();
    else this.events.add(1, { type });
    if (type === "BOOKMARK") this.bookmarks.add();
  }

  error(verb: "list" | "watch", reason: string): void {
    this.errors.add(1, { verb, reason });
  }

  synced(mode: SyncMode, seconds: number): void {
    this.initialSyncDuration.record(seconds, { mode });
  }

  consistencyFailure(): void {
    this.consistencyFailures.add();
  }
}
