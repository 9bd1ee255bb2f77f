import type { KubeConfig } from "@kubernetes/client-node";
import type { LogFields, Logger, Runnable } from "@tessera/core";
import type { CapturingLogger } from "@tessera/core/testing";
import {
  LeaderElector,
  LeadershipEndedError,
  LeaseLock,
  type LeaderElectionDurations,
  type LeaderElectionResult,
} from "../../src/index.js";
import type { LeadingInterval } from "../leading-intervals.js";

/** A leading interval on `performance.now()`, with how it ended. */
export interface RecordedInterval extends LeadingInterval {
  /** The {@link LeadershipEndReason} the signal aborted with. */
  endReason?: string;
  /** What the elector's health said the moment its signal aborted. */
  healthyAtEnd?: boolean;
}

/**
 * A logger that stamps every line with `at`, the `performance.now()` on which
 * leading intervals are recorded, so that a failure's log lines up with them.
 */
export function timestamped(logger: Logger): Logger {
  const at = (fields: LogFields | undefined): LogFields => ({ at: performance.now().toFixed(1), ...fields });
  return {
    debug: (message, fields) => logger.debug(message, at(fields)),
    info: (message, fields) => logger.info(message, at(fields)),
    warn: (message, fields) => logger.warn(message, at(fields)),
    error: (message, fields) => logger.error(message, at(fields)),
  };
}

/** The last `n` lines `logger` kept, one per line, to print when a test fails. */
export function logTail(logger: CapturingLogger, n = 60): string {
  return logger.lines
    .slice(-n)
    .map((line) => `${line.level} ${line.message} ${JSON.stringify(line.fields)}`)
    .join("\n");
}

/**
 * One replica: a LeaderElector on a LeaseLock, run the way a supervisor
 * would: when it loses leadership it campaigns again, until the signal given
 * to {@link Replica.run} aborts. Every interval it believes it leads is
 * recorded on `performance.now()`, which all replicas in this process share.
 */
export class Replica implements Runnable {
  readonly elector: LeaderElector;
  readonly intervals: RecordedInterval[] = [];
  /** Results of every run() of the elector so far. */
  readonly results: LeaderElectionResult[] = [];

  constructor(
    readonly identity: string,
    kubeConfig: KubeConfig,
    options: {
      namespace: string;
      leaseName: string;
      durations: LeaderElectionDurations;
      releaseOnCancel: boolean;
      logger: Logger;
    },
  ) {
    this.elector = new LeaderElector({
      ...options.durations,
      releaseOnCancel: options.releaseOnCancel,
      logger: timestamped(options.logger),
      lock: new LeaseLock({ kubeConfig, namespace: options.namespace, name: options.leaseName, identity }),
      callbacks: {
        onStartedLeading: (signal) => {
          const interval: RecordedInterval = { identity, start: performance.now(), end: undefined };
          this.intervals.push(interval);
          signal.addEventListener("abort", () => {
            interval.end = performance.now();
            const reason: unknown = signal.reason;
            interval.endReason = reason instanceof LeadershipEndedError ? reason.reason : String(reason);
            interval.healthyAtEnd = this.elector.healthy;
          });
        },
      },
    });
  }

  /**
   * Campaigns, and campaigns again after each loss, until `signal` aborts;
   * settles once the elector's last run has (released the lease if
   * configured to and) settled.
   */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) this.results.push(await this.elector.run(signal));
  }

  /** Whether this replica believes it leads right now. */
  get leading(): boolean {
    return this.elector.isLeader;
  }
}

/** Polls `predicate` every 10 ms; rejects with `what` after `timeoutMs`. */
export async function waitFor<T>(
  predicate: () => T | undefined | false,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = predicate();
    if (value) return value;
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Median and maximum of a list of numbers. */
export function summarize(values: number[]): { median: number; max: number; n: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median: Math.round(median), max: Math.round(sorted.at(-1) ?? 0), n: sorted.length };
}
