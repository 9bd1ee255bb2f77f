/**
 * Measures failover with client-go's default durations (lease 15 s, renew
 * deadline 10 s, retry 2 s) on a real control plane: three replicas on one
 * Lease, each through its own connection; the leader is stopped without
 * releasing (as a crash) or with release, and the time until another replica
 * starts leading is taken on the shared monotonic clock. Not part of the test
 * suite (it takes minutes); run it after `tsc -b`:
 *
 *   TESSERA_CONTROLPLANE_DIR=... scripts/with-node.sh node \
 *     packages/leader-election/dist/bench/failover.measure.js [--runs 20] [--only crash|release]
 */
import { CoreV1Api } from "@kubernetes/client-node";
import { CapturingLogger } from "@tessera/core/testing";
import { ControlPlane } from "@tessera/testenv";
import {
  DEFAULT_LEASE_DURATION_MS,
  DEFAULT_RENEW_DEADLINE_MS,
  DEFAULT_RETRY_PERIOD_MS,
} from "../src/index.js";
import { assertNoOverlap } from "../test/leading-intervals.js";
import { logTail, Replica, summarize, waitFor } from "../test/integration/live-election.js";

type Scenario = "crash" | "release";

const DURATIONS = {
  leaseDurationMs: DEFAULT_LEASE_DURATION_MS,
  renewDeadlineMs: DEFAULT_RENEW_DEADLINE_MS,
  retryPeriodMs: DEFAULT_RETRY_PERIOD_MS,
};
/** The bounds: crash within leaseDuration + retryPeriod + 1 s, release within retryPeriod + 1 s. */
const BOUND_MS: Record<Scenario, number> = {
  crash: DURATIONS.leaseDurationMs + DURATIONS.retryPeriodMs + 1000,
  release: DURATIONS.retryPeriodMs + 1000,
};
const NAMESPACE = "failover";

function argument(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function measureOnce(cp: ControlPlane, scenario: Scenario, run: number): Promise<number> {
  const logger = new CapturingLogger();
  const replicas = [0, 1, 2].map(
    (i) =>
      new Replica(`${scenario}-${run}-r${i}`, cp.kubeConfig, {
        namespace: NAMESPACE,
        leaseName: `${scenario}-${run}`,
        durations: DURATIONS,
        releaseOnCancel: scenario === "release",
        logger,
      }),
  );
  // Each replica runs under its own signal, as separate processes would.
  const stops = replicas.map(() => new AbortController());
  let runs: Array<Promise<void>> = [];
  try {
    runs = replicas.map((r, i) => r.run(stops[i]!.signal));
    const first = await waitFor(() => replicas.find((r) => r.leading), 30_000, "a first leader");
    // Land the stop at a random point of the renewal cycle, after the
    // candidates have settled into their polling.
    await new Promise((resolve) => setTimeout(resolve, 5_000 + Math.random() * DURATIONS.retryPeriodMs));
    const t0 = performance.now();
    const firstIndex = replicas.indexOf(first);
    stops[firstIndex]!.abort();
    await runs[firstIndex];
    const next = await waitFor(
      () => replicas.flatMap((r) => r.intervals).find((i) => i.start > t0 && i.identity !== first.identity),
      60_000,
      `a new leader after the ${scenario}`,
    );
    return next.start - t0;
  } catch (err) {
    console.error(logTail(logger));
    throw err;
  } finally {
    for (const stop of stops) stop.abort();
    await Promise.all(runs);
    assertNoOverlap(replicas.flatMap((r) => r.intervals));
  }
}

async function main(): Promise<void> {
  const runs = Number(argument("runs") ?? 20);
  const only = argument("only") as Scenario | undefined;
  const scenarios: Scenario[] = only ? [only] : ["release", "crash"];
  const cp = new ControlPlane();
  await cp.start();
  try {
    await cp.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NAMESPACE } } });
    console.log(
      `durations: lease ${DURATIONS.leaseDurationMs} ms, renew deadline ${DURATIONS.renewDeadlineMs} ms, ` +
        `retry ${DURATIONS.retryPeriodMs} ms; three replicas; ${runs} runs per scenario`,
    );
    for (const scenario of scenarios) {
      const times: number[] = [];
      for (let run = 0; run < runs; run++) {
        const ms = await measureOnce(cp, scenario, run);
        times.push(ms);
        console.log(`${scenario} run ${run + 1}/${runs}: failover ${Math.round(ms)} ms`);
      }
      const { median, max, n } = summarize(times);
      const within = times.filter((t) => t <= BOUND_MS[scenario]).length;
      console.log(
        `${scenario}: median ${median} ms, max ${max} ms over ${n} runs; ` +
          `${within}/${n} within ${BOUND_MS[scenario]} ms; all: ${times.map((t) => Math.round(t)).join(" ")}`,
      );
    }
  } finally {
    await cp.stop();
  }
}

await main();
