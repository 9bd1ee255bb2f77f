import type { Meter } from "@opentelemetry/api";
import { MetricGroup, type GroupCounter, type GroupGauge } from "@tessera/core";

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
 *
 * The status is a synchronous gauge set at each change of leadership, as
 * client-go sets its own, not an observable one that a run registers and
 * unregisters: the OpenTelemetry SDK keeps exporting the last value it
 * observed from an unregistered callback, so a replica whose run ended would
 * go on reporting the 1 of its last collection. Set to 0 when leadership
 * ends, the gauge stays true after the run, and there is nothing to close.
 */
export class LeaderElectionMetrics {
  private readonly group: MetricGroup;
  private readonly status: GroupGauge;
  private readonly transitions: GroupCounter;
  private readonly renewFailures: GroupCounter;

  constructor(meter: Meter, name: string) {
    this.group = new MetricGroup(meter, { name });
    this.status = this.group.settableGauge(
      "leader_election_master_status",
      "1 while this process leads the named election, 0 otherwise",
    );
    this.transitions = this.group.counter(
      "leader_election_transitions",
      "Times this process started leading the named election",
    );
    this.renewFailures = this.group.counter(
      "leader_election_renew_failures",
      "Renewal attempts that failed while leading, by reason",
    );
    this.status.record(0);
  }

  /** Leadership began: the status turns 1 and the transition is counted. */
  startedLeading(): void {
    this.status.record(1);
    this.transitions.add();
  }

  /** Leadership ended (the leadership signal aborted): the status turns 0. */
  stoppedLeading(): void {
    this.status.record(0);
  }

  renewFailed(reason: RenewFailureReason): void {
    this.renewFailures.add(1, { reason });
  }
}
