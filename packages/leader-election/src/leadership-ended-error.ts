/** Why a {@link LeaderElector} stopped leading. */
export type LeadershipEndReason =
  /** The signal given to `run()` aborted: the caller asked it to stop. */
  | "cancelled"
  /** It could not renew within renewDeadline of its last renewal. */
  | "renewDeadlineExceeded"
  /** It read the lock and found another holder. */
  | "leaseTaken";

/**
 * The `reason` of the signal handed to `onStartedLeading` once leadership is
 * over; work started under that signal should stop.
 */
export class LeadershipEndedError extends Error {
  override name = "LeadershipEndedError";

  constructor(
    readonly reason: LeadershipEndReason,
    message: string,
  ) {
    super(message);
  }
}
