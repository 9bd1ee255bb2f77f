import type { Attributes, Counter, Meter, ObservableGauge, ObservableResult } from "@opentelemetry/api";

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
 */
export class MemberMetrics {
  private readonly gauges: ObservableGauge[];
  private readonly callbacks: ((r: ObservableResult) => void)[];

  constructor(meter: Meter, ring: string, member: string, snapshot: () => MemberMetricsSnapshot) {
    const attributes: Attributes = { ring, member };
    const define = (
      name: string,
      description: string,
      value: (s: MemberMetricsSnapshot) => number | undefined,
    ) => {
      const gauge = meter.createObservableGauge(name, { description });
      const callback = (r: ObservableResult) => {
        const v = value(snapshot());
        if (v !== undefined) r.observe(v, attributes);
      };
      gauge.addCallback(callback);
      return [gauge, callback] as const;
    };
    const defined = [
      define("tessera_sharding_slots_owned", "Slots this ring member may work on", (s) => s.slots),
      define(
        "tessera_sharding_ranges_owned",
        "Hash ranges (selector terms) this member's slots make",
        (s) => s.ranges,
      ),
      define("tessera_sharding_epoch", "The assignment epoch this member applied last", (s) => s.epoch),
      define("tessera_sharding_fenced", "1 once this member fenced itself or stopped", (s) =>
        s.fenced ? 1 : 0,
      ),
    ];
    this.gauges = defined.map(([g]) => g);
    this.callbacks = defined.map(([, c]) => c);
  }

  /** Stops reporting. */
  close(): void {
    this.gauges.forEach((g, i) => g.removeCallback(this.callbacks[i]!));
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
  private readonly attributes: Attributes;
  private readonly published: Counter;
  private readonly moved: Counter;

  constructor(meter: Meter, ring: string) {
    this.attributes = { ring };
    this.published = meter.createCounter("tessera_sharding_published_epochs", {
      description: "Assignments this coordinator published",
    });
    this.moved = meter.createCounter("tessera_sharding_slots_moved", {
      description: "Slots granted to a member other than their previous owner",
    });
  }

  publishedEpoch(slotsMoved: number): void {
    this.published.add(1, this.attributes);
    if (slotsMoved > 0) this.moved.add(slotsMoved, this.attributes);
  }
}
