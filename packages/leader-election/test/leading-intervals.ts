/** One interval during which an elector believed it led, on a clock shared by all electors. */
export interface LeadingInterval {
  identity: string;
  start: number;
  /** `undefined` while still leading. */
  end: number | undefined;
}

/** Throws, naming both, when two intervals share any instant. */
export function assertNoOverlap(intervals: LeadingInterval[]): void {
  const sorted = [...intervals].sort((a, b) => a.start - b.start);
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1]!;
    const next = sorted[i]!;
    const prevEnd = prev.end ?? Number.POSITIVE_INFINITY;
    if (next.start < prevEnd) {
      throw new Error(
        `two leaders at once: ${prev.identity} led [${prev.start}, ${prev.end ?? "…"}] and ` +
          `${next.identity} started at ${next.start}`,
      );
    }
  }
}
