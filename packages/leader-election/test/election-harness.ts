import type { Meter } from "@opentelemetry/api";
import { FakeClock } from "@tessera/core/testing";
import {
  InMemoryLock,
  InMemoryLockStore,
  LeaderElector,
  type LeaderElectionResult,
  type LeaderElectorOptions,
} from "../src/index.js";
import type { LeadingInterval } from "./leading-intervals.js";

/** An elector under test with everything it reported. */
export interface Candidate {
  identity: string;
  lock: InMemoryLock;
  elector: LeaderElector;
  events: string[];
  intervals: LeadingInterval[];
  signals: AbortSignal[];
  stop: AbortController;
  result: Promise<LeaderElectionResult> | undefined;
  /** Whether the last `run()` has returned (true before the first). */
  settled: boolean;
  run(): void;
}

/** Test-sized durations: lease 3 s, renew deadline 2 s, retry 0.5 s. */
export const SHORT = { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500 } as const;

/**
 * Several electors on one in-memory lock and one fake clock, each recording
 * its callbacks (in `events`, shared order in `log`) and leading intervals.
 */
export class ElectionHarness {
  readonly clock = new FakeClock();
  readonly store = new InMemoryLockStore("default", "test");
  /** Every callback of every elector, in order: `a:started`, `b:newLeader=a`, ... */
  readonly log: string[] = [];
  readonly candidates: Candidate[] = [];

  add(
    identity: string,
    options: Partial<Omit<LeaderElectorOptions, "lock" | "callbacks">> & {
      meter?: Meter;
      work?: (signal: AbortSignal) => void | Promise<void>;
    } = {},
  ): Candidate {
    const lock = new InMemoryLock(this.store, identity);
    const events: string[] = [];
    const intervals: LeadingInterval[] = [];
    const signals: AbortSignal[] = [];
    const note = (event: string) => {
      events.push(event);
      this.log.push(`${identity}:${event}`);
    };
    const { work, ...rest } = options;
    const elector = new LeaderElector({
      ...SHORT,
      random: () => 0.5,
      clock: this.clock,
      ...rest,
      lock,
      callbacks: {
        onStartedLeading: (signal) => {
          note("started");
          signals.push(signal);
          const interval: LeadingInterval = { identity, start: this.clock.now(), end: undefined };
          intervals.push(interval);
          signal.addEventListener("abort", () => {
            interval.end = this.clock.now();
            note("aborted");
          });
          return work?.(signal);
        },
        onStoppedLeading: () => note("stopped"),
        onNewLeader: (leader) => note(`newLeader=${leader}`),
      },
    });
    const candidate: Candidate = {
      identity,
      lock,
      elector,
      events,
      intervals,
      signals,
      stop: new AbortController(),
      result: undefined,
      settled: true,
      run: () => {
        candidate.stop = new AbortController();
        candidate.settled = false;
        const result = elector.run(candidate.stop.signal);
        candidate.result = result;
        void result.finally(() => {
          if (candidate.result === result) candidate.settled = true;
        });
      },
    };
    this.candidates.push(candidate);
    return candidate;
  }

  /** Who leads right now, by the electors' own belief. */
  leaders(): string[] {
    return this.candidates.filter((c) => c.elector.isLeader).map((c) => c.identity);
  }

  /** Every leading interval of every elector, with open ones closed at `now`. */
  intervals(): LeadingInterval[] {
    return this.candidates.flatMap((c) => c.intervals.map((i) => ({ ...i, end: i.end ?? this.clock.now() })));
  }

  /** Advances in steps of `stepMs` until `predicate` holds; fails after `limitMs`. */
  async advanceUntil(predicate: () => boolean, limitMs: number, stepMs = 10): Promise<number> {
    const start = this.clock.now();
    while (!predicate()) {
      if (this.clock.now() - start > limitMs)
        throw new Error(`condition not met within ${limitMs} ms of fake time`);
      await this.clock.advance(stepMs);
    }
    return this.clock.now() - start;
  }
}
