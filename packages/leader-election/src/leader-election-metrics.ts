import type { Meter } from "@opentelemetry/api";
import { MetricGroup, type GroupCounter } from "@tessera/core";

/** Why a renewal attempt failed. */
export type RenewFailureReason = "error" | "timeout" | "conflict" | "taken";

/**
 * The instruments of one elector, all carrying the attribute `name` (the
 * election's name).
 *
 * - `leader_election_master_status` (gauge): 1 while this elector leads,
 *   else 0, as client-go reports it.
 * - `leader_election_transitions` (counter): times this elector started
 *   leading.
 * - `leader_election_renew_failures` (counter, plus `reason`): renewal
 *   attempts that failed while leading.
 */
export class LeaderElectionMetrics {
  private readonly group: MetricGroup;
  private readonly transitions: GroupCounter;
  private readonly renewFailures: GroupCounter;

  constructor(meter: Meter, name: string, isLeading: () => boolean) {
    this.group = new MetricGroup(meter, { name });
    this.group.gauge(
      "leader_election_master_status",
      "1 while this process leads the named election, 0 otherwise",
      (report) => report(isLeading() ? 1 : 0),
    );
    this.transitions = this.group.counter(
      "leader_election_transitions",
      "Times this process started leading the named election",
    );
    this.renewFailures = this.group.counter(
      "leader_election_renew_failures",
      "Renewal attempts that failed while leading, by reason",
    );
  }

  startedLeading(): void {
    this.transitions.add();
  }

  renewFailed(reason: RenewFailureReason): void {
    this.renewFailures.add(1, { reason });
  }

  /** Stops reporting the gauge. */
  close(): void {
    this.group.close();
  }
}
