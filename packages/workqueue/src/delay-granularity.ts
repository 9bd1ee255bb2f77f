/**
 * How finely a delayed add is filed: the width in milliseconds of the bucket
 * a delay of `delayMs` goes into. Long delays share one-second buckets (as the
 * apiserver's watch cache files its bookmark timers); short ones, like the
 * first rate-limited retries (5 ms, 10 ms, ...), get finer buckets so that an
 * item is never late by more than about a tenth of its delay:
 *
 * | delay            | bucket width |
 * |------------------|--------------|
 * | below 100 ms     | 1 ms         |
 * | 100 ms to 1 s    | 10 ms        |
 * | 1 s to 10 s      | 100 ms       |
 * | 10 s and above   | 1 s          |
 */
export function delayGranularityMs(delayMs: number): number {
  if (delayMs < 100) return 1;
  if (delayMs < 1_000) return 10;
  if (delayMs < 10_000) return 100;
  return 1_000;
}

/**
 * The instant an item that becomes ready at `now + delayMs` fires: its ready
 * time rounded up to its bucket, so an item never fires early and is late by
 * less than one bucket width. Buckets of every width are keyed by this instant,
 * and since each width divides the next, they line up with each other.
 */
export function bucketFireTime(now: number, delayMs: number): number {
  const width = delayGranularityMs(delayMs);
  return Math.ceil((now + delayMs) / width) * width;
}
