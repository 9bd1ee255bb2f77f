/** Retries while acquiring wait between 1 and 1 + JITTER_FACTOR retry periods. */
export const JITTER_FACTOR = 1.2;

/** client-go's defaults, in milliseconds. */
export const DEFAULT_LEASE_DURATION_MS = 15_000;
export const DEFAULT_RENEW_DEADLINE_MS = 10_000;
export const DEFAULT_RETRY_PERIOD_MS = 2_000;

/** The durations a {@link LeaderElector} runs with. */
export interface LeaderElectionDurations {
  /**
   * How long a candidate must see the same record, by its own clock, before
   * it may take the lock from a holder that stopped renewing. Written to the
   * Lease in whole seconds (rounded up). Default 15 000.
   */
  leaseDurationMs: number;
  /**
   * How long the leader keeps trying to renew before it gives up leadership
   * (and aborts the signal it gave to `onStartedLeading`). Default 10 000.
   */
  renewDeadlineMs: number;
  /** How long to wait between attempts. Default 2 000. */
  retryPeriodMs: number;
}

/** Raised at construction when the options cannot give a safe election. */
export class LeaderElectionConfigError extends Error {
  override name = "LeaderElectionConfigError";
}

const RULE = "the rule is leaseDuration > renewDeadline > 1.2 × retryPeriod";

/**
 * Fills in the defaults and checks leaseDuration > renewDeadline >
 * {@link JITTER_FACTOR} × retryPeriod. A leader gives up at renewDeadline
 * after its last renewal, so renewDeadline must be shorter than
 * leaseDuration, or a candidate could take over while the old leader still
 * acts; and at least one jittered retry must fit inside renewDeadline.
 *
 * @throws LeaderElectionConfigError stating the rule that was broken
 */
export function resolveDurations(input: Partial<LeaderElectionDurations>): LeaderElectionDurations {
  const durations: LeaderElectionDurations = {
    leaseDurationMs: input.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS,
    renewDeadlineMs: input.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS,
    retryPeriodMs: input.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS,
  };
  for (const [key, value] of Object.entries(durations)) {
    if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
      throw new LeaderElectionConfigError(
        `${key} must be a positive number of milliseconds, got ${String(value)}; ${RULE}`,
      );
    }
  }
  const { leaseDurationMs, renewDeadlineMs, retryPeriodMs } = durations;
  if (!(leaseDurationMs > renewDeadlineMs)) {
    throw new LeaderElectionConfigError(
      `leaseDuration (${leaseDurationMs} ms) must be greater than renewDeadline (${renewDeadlineMs} ms); ${RULE}`,
    );
  }
  const jittered = JITTER_FACTOR * retryPeriodMs;
  if (!(renewDeadlineMs > jittered)) {
    throw new LeaderElectionConfigError(
      `renewDeadline (${renewDeadlineMs} ms) must be greater than 1.2 × retryPeriod ` +
        `(1.2 × ${retryPeriodMs} ms = ${Number(jittered.toFixed(3))} ms); ${RULE}`,
    );
  }
  return durations;
}
