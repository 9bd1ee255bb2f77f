import type { Attributes, Counter, Meter, ObservableGauge, ObservableResult } from "@opentelemetry/api";

/** Why a renewal attempt failed. */
export type RenewFailureReason = "error" | "timeout" | "conflict" | "taken";

/**
 * The instruments of one elector.
 *
 * - `leader_election_master_status` (gauge, attribute `name`): 1 while this
 *   elector leads, else 0, as client-go reports it.
 * - `leader_election_transitions` (counter, `name`): times this elector
 *   started leading.
 * - `leader_election_renew_failures` (counter, `name`, `reason`): renewal
 *   attempts that failed while leading.
 */
export class LeaderElectionMetrics {
  private readonly attributes: Attributes;
  private readonly status: ObservableGauge;
  private readonly transitions: Counter;
  private readonly renewFailures: Counter;
  private readonly observe: (result: ObservableResult) => void;

  constructor(meter: Meter, name: string, isLeading: () => boolean) {
    this.attributes = { name };
    this.status = meter.createObservableGauge("leader_election_master_status", {
      description: "1 while this process leads the named election, 0 otherwise",
    });
    this.transitions = meter.createCounter("leader_election_transitions", {
      description: "Times this process started leading the named election",
    });
    this.renewFailures = meter.createCounter("leader_election_renew_failures", {
      description: "Renewal attempts that failed while leading, by reason",
    });
    this.observe = (result) => result.observe(isLeading() ? 1 : 0, this.attributes);
    this.status.addCallback(this.observe);
  }

  startedLeading(): void {
    this.transitions.add(1, this.attributes);
  }

  renewFailed(reason: RenewFailureReason): void {
    this.renewFailures.add(1, { ...this.attributes, reason });
  }

  /** Stops reporting the gauge. */
  close(): void {
    this.status.removeCallback(this.observe);
  }
}
