import { formatHashBound } from "./hash-bound.js";
import { HASH_SPACE, type HashRange } from "./hash-range.js";

/** What {@link checkTiling} found. */
export interface TilingReport {
  /** True when the ranges cover [0, 2^64) exactly once. */
  readonly ok: boolean;
  /** Parts of [0, 2^64) that no range covers, in order. */
  readonly gaps: readonly HashRange[];
  /** Parts covered by more than one range, in order of their start. */
  readonly overlaps: readonly HashRange[];
  /** Ranges that are not 0 <= start < end <= 2^64. */
  readonly invalid: readonly HashRange[];
}

/**
 * Checks that `ranges` tile the hash space: every hash in [0, 2^64) lies in
 * exactly one range. A gap would drop objects from every member's view; an
 * overlap would have two members process the same object.
 */
export function checkTiling(ranges: readonly HashRange[]): TilingReport {
  const invalid = ranges.filter((r) => !(r.start >= 0n && r.start < r.end && r.end <= HASH_SPACE));
  const sorted = ranges
    .filter((r) => !invalid.includes(r))
    .sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const gaps: HashRange[] = [];
  const overlaps: HashRange[] = [];
  let covered = 0n; // everything below this is covered at least once
  for (const r of sorted) {
    if (r.start > covered) gaps.push({ start: covered, end: r.start });
    else if (r.start < covered) overlaps.push({ start: r.start, end: r.end < covered ? r.end : covered });
    if (r.end > covered) covered = r.end;
  }
  if (covered < HASH_SPACE) gaps.push({ start: covered, end: HASH_SPACE });
  return { ok: gaps.length === 0 && overlaps.length === 0 && invalid.length === 0, gaps, overlaps, invalid };
}

/** Raised by {@link assertTiling} when ranges leave a gap, overlap or are malformed. */
export class TilingError extends Error {
  override name = "TilingError";

  constructor(readonly report: TilingReport) {
    const show = (rs: readonly HashRange[]) =>
      rs
        .slice(0, 5)
        .map((r) => `[${formatBoundLoose(r.start)}, ${formatBoundLoose(r.end)})`)
        .join(", ") + (rs.length > 5 ? `, and ${rs.length - 5} more` : "");
    const parts: string[] = [];
    if (report.gaps.length > 0) parts.push(`gaps ${show(report.gaps)}`);
    if (report.overlaps.length > 0) parts.push(`overlaps ${show(report.overlaps)}`);
    if (report.invalid.length > 0) parts.push(`malformed ranges ${show(report.invalid)}`);
    super(`ranges do not tile [0, 2^64) exactly once: ${parts.join("; ")}`);
  }
}

/**
 * Throws a {@link TilingError} naming the gaps and overlaps unless `ranges`
 * tile [0, 2^64) exactly once.
 */
export function assertTiling(ranges: readonly HashRange[]): void {
  const report = checkTiling(ranges);
  if (!report.ok) throw new TilingError(report);
}

function formatBoundLoose(value: bigint): string {
  return value >= 0n && value <= HASH_SPACE ? formatHashBound(value) : value.toString();
}
