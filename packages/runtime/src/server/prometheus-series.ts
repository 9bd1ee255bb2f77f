import type { Attributes } from "@opentelemetry/api";

/** The default bucket boundaries of an OpenTelemetry histogram given none (the SDK's). */
export const DEFAULT_HISTOGRAM_BOUNDARIES: readonly number[] = [
  0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000,
];

/** How a family's values aggregate: a sum (counter or up-down counter), a last value (gauge), or a histogram. */
export type SeriesKind = "sum" | "gauge" | "histogram";

/** One series of a histogram: its count, sum and per-bucket (not cumulative) counts. */
export interface HistogramValue {
  count: number;
  sum: number;
  /** `boundaries.length + 1` counts; the last is the `+Inf` bucket. */
  buckets: number[];
}

/** A series: the attributes it was first recorded with, and its value. */
export interface Series<V> {
  readonly attributes: Attributes;
  value: V;
}

/**
 * The series of one metric family, keyed by their attribute set, in the
 * order they were first recorded (the order a scrape lists them). A hot
 * path records with the same attributes object again and again (a
 * MetricGroup's bound counter), so an object's key is computed once.
 */
export class SeriesMap<V> {
  private readonly byKey = new Map<string, Series<V>>();
  private readonly keys = new WeakMap<Attributes, string>();

  /** The series of `attributes`, created with `initial()` on first use. */
  get(attributes: Attributes, initial: () => V): Series<V> {
    let key = this.keys.get(attributes);
    if (key === undefined) {
      key = attributeKey(attributes);
      this.keys.set(attributes, key);
    }
    let series = this.byKey.get(key);
    if (series === undefined) {
      series = { attributes: { ...attributes }, value: initial() };
      this.byKey.set(key, series);
    }
    return series;
  }

  get size(): number {
    return this.byKey.size;
  }

  values(): IterableIterator<Series<V>> {
    return this.byKey.values();
  }
}

/** An attribute set's identity whatever the order of its keys (as the SDK's hash). */
function attributeKey(attributes: Attributes): string {
  return JSON.stringify(Object.entries(attributes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The boundaries a histogram uses: sorted, without the infinities (as the SDK's explicit bucket aggregation). */
export function histogramBoundaries(advice: readonly number[] | undefined): number[] {
  const sorted = [...(advice ?? DEFAULT_HISTOGRAM_BOUNDARIES)].sort((a, b) => a - b);
  const from = sorted.lastIndexOf(-Infinity) + 1;
  const to = sorted.indexOf(Infinity);
  return sorted.slice(from, to === -1 ? undefined : to);
}

/** Adds `value` to a histogram series: the first bucket whose boundary is at least the value. */
export function observeHistogram(
  histogram: HistogramValue,
  boundaries: readonly number[],
  value: number,
): void {
  histogram.count++;
  histogram.sum += value;
  let i = 0;
  while (i < boundaries.length && value > boundaries[i]!) i++;
  histogram.buckets[i]!++;
}
