// The resync floor against the real API server: with maxIntervalMs 60 s,
// every one of 1,000 ConfigMaps is reconciled within each period, at an
// even rate (the informers' bucketed resync), never in a burst.
import { strict as assert } from "node:assert";
import { setTimeout as sleep } from "node:timers/promises";
import { ConfigMaps } from "@tessera/client";
import { useControlPlane } from "@tessera/testenv";
import { ApiClient, Manager } from "../../src/index.js";
import { generationChanged } from "../../src/predicates.js";
import { createNamespace } from "./support/widget-cluster.js";

const OBJECTS = 1000;
const PERIOD_MS = 60_000;
/** A key is due within its quarter-second bucket, popped by a ticker jittered up to 313 ms; the rest is the queue. */
const SLACK_MS = 2_500;

/** Counts of `times` (ms since the start) in windows of `widthMs` over [0, spanMs). */
function windows(times: readonly number[], widthMs: number, spanMs: number): number[] {
  const counts = new Array<number>(Math.floor(spanMs / widthMs)).fill(0);
  for (const t of times) {
    const i = Math.floor(t / widthMs);
    if (i >= 0 && i < counts.length) counts[i] = (counts[i] ?? 0) + 1;
  }
  return counts;
}

describe("the resync floor (real API server)", function () {
  this.timeout(360_000);
  const env = useControlPlane();

  it(`reconciles each of ${OBJECTS} objects within every period of ${PERIOD_MS / 1000} s, at an even rate`, async () => {
    const ns = await createNamespace(env.cp, "resync-floor");
    const api = new ApiClient(env.cp.kubeConfig, { fieldManager: "tessera-test" });
    const names = Array.from({ length: OBJECTS }, (_, i) => `cm-${i}`);
    for (let i = 0; i < names.length; i += 50) {
      await Promise.all(
        names.slice(i, i + 50).map((name) => api.create(ConfigMaps, { metadata: { name, namespace: ns } })),
      );
    }
    const manager = await Manager.create({
      config: {
        mode: "every-replica",
        healthBindAddress: "0",
        metricsBindAddress: "0",
        logLevel: "error",
      },
      kubeConfig: env.cp.kubeConfig,
      env: {},
    });
    const reconciles = new Map<string, number[]>(names.map((n) => [n, []]));
    manager
      .controller()
      .named("floor")
      // The predicate drops every update of a ConfigMap (no generation): only resyncs get through.
      .for(ConfigMaps, { namespaces: ns, predicates: [generationChanged()] })
      .withOptions({ maxIntervalMs: PERIOD_MS, concurrency: 4 })
      .complete((request) => void reconciles.get(request.name)?.push(Date.now()));
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    let start = Date.now();
    try {
      assert.ok(await manager.waitForSync(AbortSignal.timeout(60_000)), "the manager synced");
      // The objects were tracked as the informer listed them, before it synced.
      start = Date.now();
      await sleep(2 * PERIOD_MS + SLACK_MS);
    } finally {
      stop.abort();
      await running;
    }
    // The first reconcile of each object is its initial list; the others are resyncs.
    const resyncs: number[] = [];
    const late: string[] = [];
    for (const [name, times] of reconciles) {
      const [initial, ...rest] = times;
      assert.ok(initial !== undefined, `${name} was reconciled`);
      resyncs.push(...rest.map((t) => t - start));
      let previous = start;
      for (const t of rest) {
        if (t - previous > PERIOD_MS + SLACK_MS) late.push(`${name}: ${t - previous} ms`);
        previous = t;
      }
      if (rest.length < 2) late.push(`${name}: ${rest.length} resyncs in two periods`);
    }
    assert.deepEqual(late.slice(0, 10), [], `${late.length} objects waited longer than a period`);
    // Over the two periods, in windows of 1 s and 5 s: the mean, the lowest and the highest rate.
    const spanMs = 2 * PERIOD_MS;
    const report: string[] = [];
    const extremes: { low: number; high: number }[] = [];
    for (const widthMs of [1_000, 5_000]) {
      const counts = windows(resyncs, widthMs, spanMs);
      const rates = counts.map((c) => c / (widthMs / 1000));
      const mean = rates.reduce((a, b) => a + b, 0) / rates.length;
      const max = Math.max(...rates);
      const min = Math.min(...rates);
      extremes.push({ low: min / mean, high: max / mean });
      report.push(
        `${widthMs / 1000} s windows: mean ${mean.toFixed(1)}/s, min ${min.toFixed(1)}/s (${(min / mean).toFixed(2)}x), max ${max.toFixed(1)}/s (${(max / mean).toFixed(2)}x)`,
      );
    }
    // No burst: per second and per five seconds, never above twice the mean.
    // No lull below half the mean over five seconds; a single second may dip
    // when a loaded machine runs the ticker's timer late (it catches up).
    const [perSecond, perFive] = extremes;
    assert.ok(perSecond && perSecond.high <= 2, `1 s windows within 2x of the mean: ${report.join("; ")}`);
    assert.ok(
      perFive && perFive.high <= 2 && perFive.low >= 0.5,
      `5 s windows within 2x of the mean: ${report.join("; ")}`,
    );
    console.log(
      `      resync floor: ${OBJECTS} objects, period ${PERIOD_MS / 1000} s, ${resyncs.length} resyncs in ${spanMs / 1000} s; ${report.join("; ")}`,
    );
  });
});
