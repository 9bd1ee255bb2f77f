/** The size of the shard hash space: hashes are 64-bit, so ranges live in [0, 2^64). */
export const HASH_SPACE = 1n << 64n;

/**
 * A half-open range of 64-bit shard hashes, `start <= hash < end`, with
 * `0 <= start < end <= 2^64`.
 */
export interface HashRange {
  readonly start: bigint;
  readonly end: bigint;
}

/** The whole hash space, [0, 2^64). */
export const FULL_RANGE: HashRange = Object.freeze({ start: 0n, end: HASH_SPACE });

/** Whether `range` is well formed: integers with 0 <= start < end <= 2^64. */
export function isValidHashRange(range: HashRange): boolean {
  return range.start >= 0n && range.start < range.end && range.end <= HASH_SPACE;
}

/** Whether `hash` falls in `range`. */
export function rangeContains(range: HashRange, hash: bigint): boolean {
  return hash >= range.start && hash < range.end;
}

/**
 * The smallest list of ranges covering exactly the union of `ranges`: sorted
 * by start, overlapping and adjacent ranges merged. Input is not modified.
 */
export function mergeRanges(ranges: readonly HashRange[]): HashRange[] {
  const sorted = [...ranges].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const out: { start: bigint; end: bigint }[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last && r.start <= last.end) {
      if (r.end > last.end) last.end = r.end;
    } else {
      out.push({ start: r.start, end: r.end });
    }
  }
  return out;
}

/** The number of hashes in the union of `ranges`. */
export function rangesSize(ranges: readonly HashRange[]): bigint {
  return mergeRanges(ranges).reduce((sum, r) => sum + (r.end - r.start), 0n);
}
