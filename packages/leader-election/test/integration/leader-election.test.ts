import { strict as assert } from "node:assert";
import { CoordinationV1Api, CoreV1Api } from "@kubernetes/client-node";
import { CapturingLogger } from "@tessera/core/testing";
import { FaultProxy, kubeConfigVia, useControlPlane } from "@tessera/testenv";
import { assertNoOverlap } from "../leading-intervals.js";
import { logTail, Replica, summarize, waitFor } from "./live-election.js";

/** Shortened so that 20 runs of each scenario fit the suite's time budget; the rule still holds. */
const DURATIONS = { leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 300 };
const RUNS = 20;
/** An apiserver restart takes 3–5 s on its own, so it gets fewer runs. */
const RESTART_RUNS = 5;
const NAMESPACE = "leader-election";
/** Generous: the protocol's own bound is leaseDuration + 2.2 × retryPeriod after the last renewal. */
const FAILOVER_TIMEOUT_MS = 15_000;

type Scenario = "crash" | "release" | "cutoff" | "restart";

describe("LeaderElector on a real control plane: three replicas, one Lease", function () {
  const env = useControlPlane();
  const proxies = [0, 1, 2].map(() => undefined as FaultProxy | undefined);
  const failovers: Record<Scenario, number[]> = { crash: [], release: [], cutoff: [], restart: [] };
  const stepDowns: number[] = [];

  before(async () => {
    await env.cp.kubeConfig
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: NAMESPACE } } });
    for (let i = 0; i < proxies.length; i++) {
      const proxy = new FaultProxy(env.cp.apiserverPort);
      await proxy.start();
      proxies[i] = proxy;
    }
  });

  after(async () => {
    for (const p of proxies) await p?.stop();
    for (const [scenario, values] of Object.entries(failovers)) {
      if (!values.length) continue;
      const { median, max, n } = summarize(values);
      console.log(`      ${scenario}: failover over ${n} runs: median ${median} ms, max ${max} ms`);
    }
    if (stepDowns.length) {
      const { median, max } = summarize(stepDowns);
      console.log(`      cutoff: leader stepped down after the cut: median ${median} ms, max ${max} ms`);
    }
  });

  /**
   * One run: three replicas, each through its own fault proxy, on a fresh
   * Lease; wait for a leader, apply the fault, wait for leadership to settle
   * again; then check that no two leading intervals overlapped.
   */
  async function runOnce(scenario: Scenario, run: number): Promise<void> {
    const logger = new CapturingLogger();
    const leaseName = `${scenario}-${run}`;
    const replicas = proxies.map(
      (proxy, i) =>
        new Replica(`${scenario}-${run}-r${i}`, kubeConfigVia(env.cp.kubeConfig, proxy!.url), {
          namespace: NAMESPACE,
          leaseName,
          durations: DURATIONS,
          releaseOnCancel: scenario !== "crash",
          logger,
        }),
    );
    const all = () => replicas.flatMap((r) => r.intervals);
    let stopped = false;
    // Sample the electors' own belief too, not only the recorded intervals.
    let maxLeadersSeen = 0;
    const sampler = (async () => {
      while (!stopped) {
        maxLeadersSeen = Math.max(maxLeadersSeen, replicas.filter((r) => r.leading).length);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    // Each replica runs under its own signal, as separate processes would.
    const stops = replicas.map(() => new AbortController());
    let runs: Array<Promise<void>> = [];
    try {
      runs = replicas.map((r, i) => r.run(stops[i]!.signal));
      const first = await waitFor(() => replicas.find((r) => r.leading), 10_000, "a first leader");
      const firstIndex = replicas.indexOf(first);
      const proxy = proxies[firstIndex]!;
      // Let a few renewals go by, so that the fault lands mid-term.
      await new Promise((resolve) => setTimeout(resolve, 200 + (run % 4) * 100));
      const t0 = performance.now();
      switch (scenario) {
        case "crash":
        case "release":
          stops[firstIndex]!.abort();
          await runs[firstIndex];
          break;
        case "cutoff":
          if (run % 2 === 0) {
            proxy.refuse(true);
            proxy.cutAll();
          } else {
            proxy.stall(true);
          }
          break;
        case "restart":
          await env.cp.restartApiserver();
          break;
      }
      if (scenario === "restart") {
        // The leader may or may not have lost its term, depending on how
        // long the restart took; either way someone leads afterwards.
        await waitFor(
          () => replicas.find((r) => r.leading),
          FAILOVER_TIMEOUT_MS,
          "a leader after the restart",
        );
        failovers.restart.push(performance.now() - t0);
      } else {
        const next = await waitFor(
          () => all().find((i) => i.start > t0 && i.identity !== first.identity),
          FAILOVER_TIMEOUT_MS,
          `a new leader after the ${scenario}`,
        );
        failovers[scenario].push(next.start - t0);
        if (scenario === "cutoff") {
          const cut = first.intervals.at(-1)!;
          assert.ok(cut.end !== undefined && cut.end <= next.start, "the cut-off leader was still leading");
          assert.equal(cut.endReason, "renewDeadlineExceeded");
          assert.equal(cut.healthyAtEnd, false, "the cut-off leader did not report itself unhealthy");
          stepDowns.push(cut.end - t0);
        }
      }
      if (scenario === "release") {
        const lease = await env.cp.kubeConfig
          .makeApiClient(CoordinationV1Api)
          .readNamespacedLease({ name: leaseName, namespace: NAMESPACE });
        assert.equal(lease.spec?.leaseTransitions, 1, "one hand-over, counted once");
      }
      // Leadership stays put for a while once settled.
      await new Promise((resolve) => setTimeout(resolve, 200));
    } catch (err) {
      (err as Error).message += `\nintervals: ${JSON.stringify(all())}\nlog:\n${logTail(logger)}`;
      throw err;
    } finally {
      proxies.forEach((p) => {
        p!.refuse(false);
        p!.stall(false);
      });
      for (const stop of stops) stop.abort();
      await Promise.all(runs);
      stopped = true;
      await sampler;
    }
    try {
      assertNoOverlap(all());
      assert.ok(maxLeadersSeen <= 1, `${maxLeadersSeen} replicas believed they led at the same moment`);
    } catch (err) {
      (err as Error).message += `\nintervals: ${JSON.stringify(all())}\nlog:\n${logTail(logger)}`;
      throw err;
    }
  }

  it(`the leader stopped without releasing: ${RUNS} runs, the next takes over once the lease expires`, async function () {
    for (let run = 0; run < RUNS; run++) await runOnce("crash", run);
    assert.equal(failovers.crash.length, RUNS);
  });

  it(`the leader stopped with release: ${RUNS} runs, the next takes over on its next retry`, async function () {
    for (let run = 0; run < RUNS; run++) await runOnce("release", run);
    assert.equal(failovers.release.length, RUNS);
  });

  it(`the leader cut off by the fault proxy (refused / stalled): ${RUNS} runs, it stops leading before the lease can be taken`, async function () {
    for (let run = 0; run < RUNS; run++) await runOnce("cutoff", run);
    assert.equal(failovers.cutoff.length, RUNS);
  });

  it(`a kube-apiserver restart: ${RESTART_RUNS} runs, never two leaders, a leader again afterwards`, async function () {
    for (let run = 0; run < RESTART_RUNS; run++) await runOnce("restart", run);
    assert.equal(failovers.restart.length, RESTART_RUNS);
  });
});
