/**
 * The manager lost the leader Lease while it led (a renewal did not succeed
 * within the renew deadline). As with controller-runtime, the manager stops
 * and its run rejects: the process exits non-zero and restarts as a standby,
 * rather than risk reconciling beside a new leader.
 */
export class LeaderElectionLostError extends Error {
  override readonly name = "LeaderElectionLostError";
  constructor(lease: string, reason: string) {
    super(
      `leader election lost: Lease ${lease}: ${reason}; the manager stops so the process restarts as a standby`,
    );
  }
}
