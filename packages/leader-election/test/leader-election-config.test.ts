import { strict as assert } from "node:assert";
import {
  InMemoryLock,
  InMemoryLockStore,
  LeaderElectionConfigError,
  LeaderElector,
  resolveDurations,
} from "../src/index.js";

const RULE = /the rule is leaseDuration > renewDeadline > 1\.2 × retryPeriod/;

describe("leader election durations", () => {
  it("default to client-go's 15 s / 10 s / 2 s", () => {
    assert.deepEqual(resolveDurations({}), {
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
    });
  });

  it("accept test-sized durations that keep the rule", () => {
    assert.deepEqual(resolveDurations({ leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500 }), {
      leaseDurationMs: 3000,
      renewDeadlineMs: 2000,
      retryPeriodMs: 500,
    });
  });

  const cases: Array<[string, Parameters<typeof resolveDurations>[0], RegExp]> = [
    [
      "leaseDuration equal to renewDeadline",
      { leaseDurationMs: 10_000 },
      /leaseDuration \(10000 ms\) must be greater than renewDeadline \(10000 ms\)/,
    ],
    [
      "leaseDuration below renewDeadline",
      { leaseDurationMs: 5_000, renewDeadlineMs: 8_000 },
      /leaseDuration \(5000 ms\) must be greater than renewDeadline \(8000 ms\)/,
    ],
    [
      "renewDeadline equal to 1.2 × retryPeriod",
      { renewDeadlineMs: 2_400, retryPeriodMs: 2_000 },
      /renewDeadline \(2400 ms\) must be greater than 1\.2 × retryPeriod \(1\.2 × 2000 ms = 2400 ms\)/,
    ],
    [
      "renewDeadline between retryPeriod and 1.2 × retryPeriod",
      { leaseDurationMs: 3000, renewDeadlineMs: 550, retryPeriodMs: 500 },
      /renewDeadline \(550 ms\) must be greater than 1\.2 × retryPeriod \(1\.2 × 500 ms = 600 ms\)/,
    ],
    [
      "a zero retryPeriod",
      { retryPeriodMs: 0 },
      /retryPeriodMs must be a positive number of milliseconds, got 0/,
    ],
    ["a negative leaseDuration", { leaseDurationMs: -1 }, /leaseDurationMs must be a positive number/],
    [
      "a NaN renewDeadline",
      { renewDeadlineMs: Number.NaN },
      /renewDeadlineMs must be a positive number.*got NaN/,
    ],
  ];
  for (const [label, input, message] of cases) {
    it(`reject ${label}, stating the rule`, () => {
      assert.throws(
        () => resolveDurations(input),
        (err: unknown) =>
          err instanceof LeaderElectionConfigError && message.test(err.message) && RULE.test(err.message),
      );
    });
  }

  it("are checked when a LeaderElector is constructed", () => {
    const lock = new InMemoryLock(new InMemoryLockStore(), "a");
    assert.throws(
      () =>
        new LeaderElector({
          lock,
          callbacks: { onStartedLeading: () => {} },
          leaseDurationMs: 2000,
          renewDeadlineMs: 2000,
        }),
      LeaderElectionConfigError,
    );
    assert.throws(
      () => new LeaderElector({ lock, callbacks: {} as never }),
      /callbacks\.onStartedLeading is required/,
    );
    assert.throws(
      () =>
        new LeaderElector({
          lock: new InMemoryLock(new InMemoryLockStore(), ""),
          callbacks: { onStartedLeading: () => {} },
        }),
      /identity must not be empty/,
    );
    assert.throws(
      () => new LeaderElector({ lock, callbacks: { onStartedLeading: () => {} }, requestTimeoutMs: 0 }),
      /requestTimeoutMs must be a positive number/,
    );
  });
});
