import type {
  Attributes,
  Counter,
  Histogram,
  Meter,
  ObservableGauge,
  ObservableResult,
} from "@opentelemetry/api";

/** A counter of a {@link MetricGroup}: its data points carry the group's attributes. */
export interface GroupCounter {
  /** Adds `value` (default 1), with `extra` attributes on top of the group's. */
  add(value?: number, extra?: Attributes): void;
  /** The same counter with `extra` merged once, for a hot path that adds with fixed attributes. */
  bind(extra: Attributes): { add(value?: number): void };
}

/** A histogram of a {@link MetricGroup}. */
export interface GroupHistogram {
  /** Records `value`, with `extra` attributes on top of the group's. */
  record(value: number, extra?: Attributes): void;
}

/** A gauge whose value the component sets when it changes (a synchronous gauge). */
export interface GroupGauge {
  /** Sets the value, with `extra` attributes on top of the group's. */
  record(value: number, extra?: Attributes): void;
}

/** Reports a gauge's value(s) when the meter collects; `extra` attributes go on top of the group's. */
export type GaugeReport = (value: number, extra?: Attributes) => void;

/** Options of an instrument. */
export interface InstrumentOptions {
  /** The unit, e.g. `"s"`. */
  unit?: string;
  /** Histogram bucket boundaries (a hint to the SDK). */
  buckets?: number[];
}

/**
 * The instruments of one component, all carrying the same attributes (the
 * reflector's name and resource, the queue's name): counters, histograms,
 * and observable gauges read at collection time (so they cost nothing per
 * event) that {@link MetricGroup.close} unregisters. Every package's
 * `*-metrics.ts` builds its named instruments on one of these.
 *
 * ```ts
 * const group = new MetricGroup(meter, { name: "widgets" });
 * const adds = group.counter("workqueue_adds_total", "Total number of adds handled by the workqueue");
 * group.gauge("workqueue_depth", "Current depth of the workqueue", (report) => report(queue.length));
 * adds.add();
 * group.close(); // the gauge is no longer observed
 * ```
 */
export class MetricGroup {
  /** The attributes every data point carries (frozen). */
  readonly attributes: Attributes;
  private readonly registered: Array<{ gauge: ObservableGauge; callback: (r: ObservableResult) => void }> =
    [];
  private closed = false;

  constructor(
    private readonly meter: Meter,
    attributes: Attributes = {},
  ) {
    this.attributes = Object.freeze({ ...attributes });
  }

  /** A monotonic counter. */
  counter(name: string, description: string, options: InstrumentOptions = {}): GroupCounter {
    const counter: Counter = this.meter.createCounter(name, { description, ...unit(options) });
    return {
      add: (value = 1, extra) => counter.add(value, this.merge(extra)),
      bind: (extra) => {
        const attributes = this.merge(extra);
        return { add: (value = 1) => counter.add(value, attributes) };
      },
    };
  }

  /** A histogram; `options.buckets` are its explicit bucket boundaries. */
  histogram(name: string, description: string, options: InstrumentOptions = {}): GroupHistogram {
    const histogram: Histogram = this.meter.createHistogram(name, {
      description,
      ...unit(options),
      ...(options.buckets ? { advice: { explicitBucketBoundaries: options.buckets } } : {}),
    });
    return { record: (value, extra) => histogram.record(value, this.merge(extra)) };
  }

  /**
   * A gauge set when its value changes (1 while leading, 0 after). Prefer it
   * to an observable gauge for a value that must read right after the
   * component stopped: once an observable gauge is unregistered, the SDK keeps
   * exporting the last value it observed.
   */
  settableGauge(name: string, description: string, options: InstrumentOptions = {}): GroupGauge {
    const gauge = this.meter.createGauge(name, { description, ...unit(options) });
    return { record: (value, extra) => gauge.record(value, this.merge(extra)) };
  }

  /**
   * An observable gauge: `observe` is called each time the meter collects and
   * reports zero or more values (one per extra attribute set). Stops being
   * observed at {@link MetricGroup.close} (the SDK then keeps exporting the
   * last value observed; see {@link MetricGroup.settableGauge}).
   */
  gauge(
    name: string,
    description: string,
    observe: (report: GaugeReport) => void,
    options: InstrumentOptions = {},
  ): void {
    if (this.closed) return;
    const gauge = this.meter.createObservableGauge(name, { description, ...unit(options) });
    const callback = (result: ObservableResult): void =>
      observe((value, extra) => result.observe(value, this.merge(extra)));
    gauge.addCallback(callback);
    this.registered.push({ gauge, callback });
  }

  /** Unregisters every gauge (the component stopped). Counters need nothing. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const { gauge, callback } of this.registered.splice(0)) gauge.removeCallback(callback);
  }

  private merge(extra: Attributes | undefined): Attributes {
    return extra ? { ...this.attributes, ...extra } : this.attributes;
  }
}

function unit(options: InstrumentOptions): { unit?: string } {
  return options.unit === undefined ? {} : { unit: options.unit };
}
