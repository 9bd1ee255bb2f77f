import type {
  Attributes,
  BatchObservableCallback,
  BatchObservableResult,
  Counter,
  Gauge,
  Histogram,
  Meter,
  MeterProvider,
  MetricOptions,
  Observable,
  ObservableCallback,
  ObservableCounter,
  ObservableGauge,
  ObservableResult,
  ObservableUpDownCounter,
  UpDownCounter,
} from "@opentelemetry/api";
import {
  histogramBoundaries,
  observeHistogram,
  SeriesMap,
  type HistogramValue,
  type SeriesKind,
} from "./prometheus-series.js";

type PrometheusType = "counter" | "gauge" | "histogram";

/** One metric family: what the scrape's `# HELP`, `# UNIT` and `# TYPE` lines say, and its series. */
interface Family {
  readonly name: string;
  readonly help: string;
  readonly unit: string;
  readonly type: PrometheusType;
  readonly kind: SeriesKind;
  readonly boundaries: number[];
  readonly series: SeriesMap<number | HistogramValue>;
  readonly callbacks: Set<ObservableCallback>;
}

const EMPTY: Attributes = Object.freeze({});

/**
 * An OpenTelemetry `MeterProvider` that aggregates in place and writes the
 * Prometheus text exposition itself, in place of the OpenTelemetry SDK and
 * its Prometheus exporter (which add about 30 MiB to an idle process). It
 * implements what the SDK does with its defaults and cumulative temporality,
 * and writes what the exporter writes with `withoutScopeInfo` and
 * `withoutTargetInfo`: counters (monotonic sums, `_total` appended when
 * missing), up-down counters (gauges), histograms with explicit buckets
 * (`_count`, `_sum`, cumulative `_bucket{le}`), synchronous and observable
 * gauges (the last value observed stays after a callback is removed),
 * names sanitized the same way, a family listed once it has a series.
 * Instruments of one name share one family, whatever meter made them.
 * No views, exemplars or cardinality limit; for those (or OTLP), use
 * {@link OpenTelemetrySdkMetrics}.
 */
export class PrometheusMeterProvider implements MeterProvider {
  private readonly families = new Map<string, Family>();
  private readonly batchCallbacks = new Map<BatchObservableCallback, ReadonlyMap<Observable, Family>>();
  /** The observable instruments this provider made, for batch callbacks. */
  private readonly observableFamilies = new WeakMap<Observable, Family>();
  private readonly meterInstance: Meter;

  constructor() {
    this.meterInstance = this.createMeter();
  }

  /** The meter (one for every scope: the scrape carries no scope labels). */
  getMeter(): Meter {
    return this.meterInstance;
  }

  /** Runs the observable callbacks, then writes every family in the Prometheus text format (0.0.4). */
  async collect(): Promise<string> {
    const pending: Array<Promise<void>> = [];
    for (const family of this.families.values()) {
      if (family.callbacks.size === 0) continue;
      const result: ObservableResult = {
        observe: (value, attributes = EMPTY) => observeValue(family, value, attributes),
      };
      for (const callback of family.callbacks) safely(() => callback(result), pending);
    }
    for (const [callback, families] of this.batchCallbacks) {
      const result: BatchObservableResult = {
        observe: (observable, value, attributes = EMPTY) => {
          const family = families.get(observable);
          if (family) observeValue(family, value, attributes);
        },
      };
      safely(() => callback(result), pending);
    }
    await Promise.all(pending);
    let text = "";
    for (const family of this.families.values()) if (family.series.size > 0) text += exposition(family);
    return text === "" ? "# no registered metrics" : text;
  }

  private createMeter(): Meter {
    const meter: Meter = {
      createCounter: (name, options) => {
        const family = this.family(name, options, "counter", "sum");
        return {
          add: (value: number, attributes?: Attributes) => {
            if (value >= 0) addSum(family, value, attributes ?? EMPTY);
          },
        } satisfies Counter;
      },
      createUpDownCounter: (name, options) => {
        const family = this.family(name, options, "gauge", "sum");
        return {
          add: (value: number, attributes?: Attributes) => addSum(family, value, attributes ?? EMPTY),
        } satisfies UpDownCounter;
      },
      createHistogram: (name, options) => {
        const family = this.family(name, options, "histogram", "histogram");
        return {
          record: (value: number, attributes?: Attributes) => {
            if (value >= 0) observeValue(family, value, attributes ?? EMPTY);
          },
        } satisfies Histogram;
      },
      createGauge: (name, options) => {
        const family = this.family(name, options, "gauge", "gauge");
        return {
          record: (value: number, attributes?: Attributes) =>
            observeValue(family, value, attributes ?? EMPTY),
        } satisfies Gauge;
      },
      createObservableGauge: (name, options) => this.observable<ObservableGauge>(name, options, "gauge"),
      createObservableCounter: (name, options) =>
        this.observable<ObservableCounter>(name, options, "counter"),
      createObservableUpDownCounter: (name, options) =>
        this.observable<ObservableUpDownCounter>(name, options, "gauge"),
      addBatchObservableCallback: (callback, observables) => {
        const families = new Map<Observable, Family>();
        for (const observable of observables) {
          const family = this.observableFamilies.get(observable);
          if (family) families.set(observable, family);
        }
        this.batchCallbacks.set(callback, families);
      },
      removeBatchObservableCallback: (callback) => {
        this.batchCallbacks.delete(callback);
      },
    };
    return meter;
  }

  private observable<T extends Observable>(
    name: string,
    options: MetricOptions | undefined,
    type: PrometheusType,
  ): T {
    // An observable counter reports its cumulative value: the last observed, as a gauge's.
    const family = this.family(name, options, type, "gauge");
    const observable: Observable = {
      addCallback: (callback) => void family.callbacks.add(callback),
      removeCallback: (callback) => void family.callbacks.delete(callback),
    };
    this.observableFamilies.set(observable, family);
    return observable as T;
  }

  /** The family of an instrument name; a second instrument of the name shares it (a different type gets a detached one, not exported, as the exporter drops conflicting types). */
  private family(
    name: string,
    options: MetricOptions | undefined,
    type: PrometheusType,
    kind: SeriesKind,
  ): Family {
    let exported = sanitize(name);
    if (type === "counter" && !exported.endsWith("_total")) exported += "_total";
    const existing = this.families.get(exported);
    if (existing && existing.type === type && existing.kind === kind) return existing;
    const family: Family = {
      name: exported,
      help: options?.description ?? "",
      unit: options?.unit ?? "",
      type,
      kind,
      boundaries: kind === "histogram" ? histogramBoundaries(options?.advice?.explicitBucketBoundaries) : [],
      series: new SeriesMap(),
      callbacks: new Set(),
    };
    if (!existing) this.families.set(exported, family);
    return family;
  }
}

function addSum(family: Family, value: number, attributes: Attributes): void {
  const series = family.series.get(attributes, () => 0);
  series.value = (series.value as number) + value;
}

function observeValue(family: Family, value: number, attributes: Attributes): void {
  if (family.kind === "histogram") {
    const series = family.series.get(attributes, () => ({
      count: 0,
      sum: 0,
      buckets: new Array<number>(family.boundaries.length + 1).fill(0),
    }));
    observeHistogram(series.value as HistogramValue, family.boundaries, value);
  } else {
    family.series.get(attributes, () => 0).value = value;
  }
}

/** Runs an observable callback, an async one's promise into `pending`; one that fails loses its observations, not the scrape. */
function safely(run: () => Promise<void> | void, pending: Array<Promise<void>>): void {
  try {
    const result = run();
    if (result instanceof Promise) pending.push(result.catch(() => {}));
  } catch {
    // As the SDK: the other callbacks' observations are still exported.
  }
}

/** Invalid characters become `_`, runs of `_` one; a leading digit gets a `_` (the exporter's rules). */
function sanitize(name: string): string {
  const clean = name.replace(/[^a-z0-9_]/gi, "_").replace(/_{2,}/g, "_");
  return clean[0]! >= "0" && clean[0]! <= "9" ? `_${clean}` : clean;
}

function escapeHelp(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

function labels(attributes: Attributes, le?: string): string {
  let text = "";
  for (const [key, value] of Object.entries(attributes)) {
    const raw = typeof value === "string" ? value : JSON.stringify(value);
    text += `${text ? "," : ""}${sanitize(key)}="${escapeHelp(raw ?? "").replace(/"/g, '\\"')}"`;
  }
  if (le !== undefined) text += `${text ? "," : ""}le="${le}"`;
  return text ? `{${text}}` : "";
}

function number(value: number): string {
  return value === Infinity ? "+Inf" : value === -Infinity ? "-Inf" : `${value}`;
}

/** One family in the text format, ending with a newline. */
function exposition(family: Family): string {
  const { name } = family;
  let text = `# HELP ${name} ${escapeHelp(family.help || "description missing")}\n`;
  if (family.unit) text += `# UNIT ${name} ${escapeHelp(family.unit)}\n`;
  text += `# TYPE ${name} ${family.type}\n`;
  for (const { attributes, value } of family.series.values()) {
    if (typeof value === "number") {
      text += `${name}${labels(attributes)} ${number(value)}\n`;
      continue;
    }
    text += `${name}_count${labels(attributes)} ${number(value.count)}\n`;
    text += `${name}_sum${labels(attributes)} ${number(value.sum)}\n`;
    let cumulative = 0;
    for (let i = 0; i < value.buckets.length; i++) {
      cumulative += value.buckets[i]!;
      const bound = family.boundaries[i];
      text += `${name}_bucket${labels(attributes, bound === undefined ? "+Inf" : String(bound))} ${cumulative}\n`;
    }
  }
  return text;
}
