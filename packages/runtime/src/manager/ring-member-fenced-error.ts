/**
 * A sharded controller's ring member fenced itself: its member Lease was not
 * renewed within the renew deadline, so the coordinator may soon give its
 * slots to others. As with a lost leader Lease, the manager stops and its run
 * rejects, so the process exits non-zero and restarts, and the member joins
 * the ring anew; a fenced member that stayed up would hold no slots and
 * reconcile nothing, for good.
 */
export class RingMemberFencedError extends Error {
  override readonly name = "RingMemberFencedError";
  constructor(
    /** The ring member's identity. */
    readonly identity: string,
    cause: unknown,
  ) {
    super(
      `ring member ${identity} fenced itself (${cause instanceof Error ? cause.message : String(cause)}); the manager stops so the process restarts and rejoins the ring`,
      { cause },
    );
  }
}
