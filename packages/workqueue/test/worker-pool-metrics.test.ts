import { strict as assert } from "node:assert";
import { sleep } from "@tessera/core";
import { FakeClock, TestMetrics } from "@tessera/core/testing";
import type { Histogram } from "@opentelemetry/sdk-metrics";
import {
  ExponentialFailureRateLimiter,
  TerminalError,
  WorkQueue,
  WorkerPool,
  type WorkResult,
} from "../src/index.js";

describe("worker pool metrics", () => {
  const controller = { controller: "widgets" };
  let clock: FakeClock;
  let metrics: TestMetrics;

  beforeEach(() => {
    clock = new FakeClock();
    metrics = new TestMetrics();
  });

  afterEach(async () => {
    await metrics.close();
  });

  it("exports controller-runtime's controller metrics, labelled with the queue's name", async () => {
    // Retries wait long enough not to run within this test.
    const rateLimiter = new ExponentialFailureRateLimiter<string>({ baseDelayMs: 10_000 });
    const queue = new WorkQueue<string>({ name: "widgets", clock, rateLimiter });
    // Each item takes its own time and ends its own way.
    const script: Record<string, { ms: number; end: () => WorkResult | void }> = {
      ok: { ms: 100, end: () => undefined },
      later: { ms: 200, end: () => ({ requeueAfterMs: 60_000 }) },
      conflict: {
        ms: 300,
        end: () => {
          throw new Error("conflict");
        },
      },
      invalid: {
        ms: 400,
        end: () => {
          throw new TerminalError("invalid spec");
        },
      },
    };
    const pool = new WorkerPool<string>({
      queue,
      clock,
      meter: metrics.meter,
      concurrency: 8,
      handler: async (item) => {
        const { ms, end } = script[item]!;
        await sleep(clock, ms);
        return end();
      },
    });
    const stop = new AbortController();
    const running = pool.run(stop.signal);
    for (const item of Object.keys(script)) queue.add(item);
    await clock.flush();

    assert.equal(await metrics.value("controller_runtime_active_workers", controller), 4);
    assert.equal(await metrics.value("controller_runtime_max_concurrent_reconciles", controller), 8);

    await clock.advance(400);
    assert.equal(await metrics.value("controller_runtime_active_workers", controller), 0);
    const total = (result: string) =>
      metrics.sum("controller_runtime_reconcile_total", { ...controller, result });
    assert.equal(await total("success"), 1);
    assert.equal(await total("requeue_after"), 1);
    assert.equal(await total("error"), 2);
    assert.equal(await total("requeue"), 0, "nothing asks for a requeue without a delay any more");
    assert.equal(await metrics.sum("controller_runtime_reconcile_errors_total", controller), 2);
    assert.equal(await metrics.sum("controller_runtime_terminal_reconcile_errors_total", controller), 1);

    const [point] = await metrics.points("controller_runtime_reconcile_time_seconds", controller);
    assert.ok(point);
    const time = point.value as Histogram;
    assert.equal(time.count, 4);
    assert.ok(Math.abs((time.sum ?? 0) - (0.1 + 0.2 + 0.3 + 0.4)) < 1e-9, `sum ${time.sum}`);
    assert.deepEqual(
      time.buckets.boundaries,
      [
        0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
        1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
      ],
    );
    const collected = await metrics.collect();
    assert.equal(collected.get("controller_runtime_reconcile_time_seconds")?.descriptor.unit, "s");
    assert.equal(
      collected.get("controller_runtime_reconcile_total")?.descriptor.description,
      "Total number of reconciliations per controller",
    );

    stop.abort();
    assert.deepEqual(await running, { drained: true, abandoned: [] });
  });

  it("counts a timeout as an error", async () => {
    const queue = new WorkQueue<string>({ name: "widgets", clock });
    const pool = new WorkerPool<string>({
      queue,
      clock,
      meter: metrics.meter,
      timeoutMs: 1_000,
      handler: (_item, { signal }) => sleep(clock, 5_000, signal),
    });
    const stop = new AbortController();
    const running = pool.run(stop.signal);
    queue.add("slow");
    await clock.advance(1_000);
    assert.equal(await metrics.sum("controller_runtime_reconcile_errors_total", controller), 1);
    assert.equal(
      await metrics.sum("controller_runtime_reconcile_total", { ...controller, result: "error" }),
      1,
    );
    stop.abort();
    await clock.advance(30_000);
    await running;
  });
});
