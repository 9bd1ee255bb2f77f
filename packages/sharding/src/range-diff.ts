import { mergeRanges, type HashRange } from "./hash-range.js";

/** What moving from one set of watched ranges to another asks of each watched range. */
export interface RangeDiff {
  /** Indices into `current` of ranges wholly kept: left alone. */
  readonly kept: readonly number[];
  /** Indices into `current` of ranges wholly lost: stopped, their objects evicted. */
  readonly stopped: readonly number[];
  /**
   * Ranges partly kept (the planner gave away part of a run): `parts` are the
   * kept pieces, in order, each to be watched on its own, resuming where the
   * old range's watch stopped; the rest is evicted.
   */
  readonly split: readonly { readonly index: number; readonly parts: readonly HashRange[] }[];
  /** Parts of the target no current range covers: each is listed and watched anew. Maximal runs, in order. */
  readonly started: readonly HashRange[];
}

/**
 * Compares the ranges watched now (`current`, disjoint) with the ranges to
 * watch (`target`, any ranges; their union counts). Kept ranges are never
 * merged with new neighbours, so a kept range is never relisted.
 */
export function diffRanges(current: readonly HashRange[], target: readonly HashRange[]): RangeDiff {
  const wanted = mergeRanges(target);
  const kept: number[] = [];
  const stopped: number[] = [];
  const split: { index: number; parts: HashRange[] }[] = [];
  const covered: HashRange[] = [];
  current.forEach((c, index) => {
    const parts = intersect(c, wanted);
    covered.push(...parts);
    if (parts.length === 0) stopped.push(index);
    else if (parts.length === 1 && parts[0]!.start === c.start && parts[0]!.end === c.end) kept.push(index);
    else split.push({ index, parts });
  });
  return { kept, stopped, split, started: subtract(wanted, mergeRanges(covered)) };
}

/** The pieces of `range` inside `sorted` (disjoint, sorted), in order. */
function intersect(range: HashRange, sorted: readonly HashRange[]): HashRange[] {
  const out: HashRange[] = [];
  for (const t of sorted) {
    const start = t.start > range.start ? t.start : range.start;
    const end = t.end < range.end ? t.end : range.end;
    if (start < end) out.push({ start, end });
  }
  return out;
}

/** `from` minus `holes`, both disjoint and sorted, as maximal runs. */
function subtract(from: readonly HashRange[], holes: readonly HashRange[]): HashRange[] {
  const out: HashRange[] = [];
  for (const r of from) {
    let cursor = r.start;
    for (const h of holes) {
      if (h.end <= cursor || h.start >= r.end) continue;
      if (h.start > cursor) out.push({ start: cursor, end: h.start });
      cursor = h.end > cursor ? h.end : cursor;
    }
    if (cursor < r.end) out.push({ start: cursor, end: r.end });
  }
  return out;
}
