import type { Meter } from "@opentelemetry/api";
import { MetricGroup, type GroupCounter } from "@tessera/core";

/** What a member reports, read at collection time. */
export interface MemberMetricsSnapshot {
  /** Slots the member may work on now. */
  slots: number;
  /** Ranges (selector terms) those slots make. */
  ranges: number;
  /** The last epoch applied; undefined before the first. */
  epoch: number | undefined;
  /** Whether the member fenced itself or stopped. */
  fenced: boolean;
}

/**
 * A ring member's instruments, attributes `ring` and `member`:
 *
 * - `tessera_sharding_slots_owned` (gauge): slots the member may work on.
 * - `tessera_sharding_ranges_owned` (gauge): ranges those slots make.
 * - `tessera_sharding_epoch` (gauge): the assignment epoch last applied.
 * - `tessera_sharding_fenced` (gauge): 1 once the member fenced itself or stopped.
 *
 * Gauges only: they cost nothing per assignment and are read at collection
 * time. {@link MemberMetrics.close} unregisters them.
 */
export class MemberMetrics {
  private readonly group: MetricGroup;

  constructor(meter: Meter, ring: string, member: string, snapshot: () => MemberMetricsSnapshot) {
    this.group = new MetricGroup(meter, { ring, member });
    const define = (
      name: string,
      description: string,
      value: (s: MemberMetricsSnapshot) => number | undefined,
    ): void =>
      this.group.gauge(name, description, (report) => {
        const v = value(snapshot());
        if (v !== undefined) report(v);
      });
    define("tessera_sharding_slots_owned", "Slots this ring member may work on", (s) => s.slots);
    define(
      "tessera_sharding_ranges_owned",
      "Hash ranges (selector terms) this member's slots make",
      (s) => s.ranges,
    );
    define("tessera_sharding_epoch", "The assignment epoch this member applied last", (s) => s.epoch);
    define("tessera_sharding_fenced", "1 once this member fenced itself or stopped", (s) =>
      s.fenced ? 1 : 0,
    );
  }

  /** Stops reporting (the member stopped). Idempotent. */
  close(): void {
    this.group.close();
  }
}

/**
 * The coordinator's instruments, attribute `ring`:
 *
 * - `tessera_sharding_published_epochs` (counter): assignments published.
 * - `tessera_sharding_slots_moved` (counter): slots granted to a member other
 *   than their previous owner (each slot counted once per move, when granted).
 */
export class CoordinatorMetrics {
  private readonly published: GroupCounter;
  private readonly moved: GroupCounter;

  constructor(meter: Meter, ring: string) {
    const group = new MetricGroup(meter, { ring });
    this.published = group.counter(
      "tessera_sharding_published_epochs",
      "Assignments this coordinator published",
    );
    this.moved = group.counter(
      "tessera_sharding_slots_moved",
      "Slots granted to a member other than their previous owner",
    );
  }

  publishedEpoch(slotsMoved: number): void {
    this.published.add(1);
    if (slotsMoved > 0) this.moved.add(slotsMoved);
  }
}

/** What a sharded reflector reports, read at collection time. */
export interface ShardedReflectorMetricsSnapshot {
  /** Objects in the store from all the member's ranges. */
  objects: number;
  /** Range reflectors running (one watch each). */
  ranges: number;
  /** Whether the server filters by `shardSelector`; undefined until probed. */
  serverFiltering: boolean | undefined;
}

/**
 * A sharded reflector's instruments, attributes `resource` and, when given,
 * `ring` and `member`:
 *
 * - `tessera_sharding_cached_objects` (gauge): objects the member caches
 *   from its ranges.
 * - `tessera_sharding_range_watches` (gauge): range reflectors (watches) running.
 * - `tessera_sharding_server_filtering` (gauge): 1 when the server filters
 *   by `shardSelector` (a LIST probe saw `shardInfo`), 0 when it does not and
 *   the member filters client-side alone; absent until probed.
 * - `tessera_sharding_client_filtered_total` (counter): list items and watch
 *   events the client-side check dropped: what an unfiltering server sent
 *   for other members.
 *
 * {@link ShardedReflectorMetrics.close} unregisters the gauges.
 */
export class ShardedReflectorMetrics {
  private readonly group: MetricGroup;
  private readonly filtered: GroupCounter;

  constructor(
    meter: Meter,
    attributes: { resource: string; ring?: string; member?: string },
    snapshot: () => ShardedReflectorMetricsSnapshot,
  ) {
    this.group = new MetricGroup(meter, attributes);
    const define = (
      name: string,
      description: string,
      value: (s: ShardedReflectorMetricsSnapshot) => number | undefined,
    ): void =>
      this.group.gauge(name, description, (report) => {
        const v = value(snapshot());
        if (v !== undefined) report(v);
      });
    define(
      "tessera_sharding_cached_objects",
      "Objects this member caches from its shard ranges",
      (s) => s.objects,
    );
    define("tessera_sharding_range_watches", "Range reflectors (one watch each) running", (s) => s.ranges);
    define(
      "tessera_sharding_server_filtering",
      "1 when the API server filters this resource by shardSelector, 0 when only the client does",
      (s) => (s.serverFiltering === undefined ? undefined : s.serverFiltering ? 1 : 0),
    );
    this.filtered = this.group.counter(
      "tessera_sharding_client_filtered_total",
      "List items and watch events outside the member's ranges, dropped by the client-side check",
    );
  }

  clientFiltered(count: number): void {
    this.filtered.add(count);
  }

  /** Stops reporting the gauges (the reflector stopped). Idempotent. */
  close(): void {
    this.group.close();
  }
}
