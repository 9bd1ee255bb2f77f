import { strict as assert } from "node:assert";
import { FakeClock, TestMetrics } from "@tessera/core/testing";
import { DataPointType, type DataPoint, type Histogram, type MetricData } from "@opentelemetry/sdk-metrics";
import { WorkQueue } from "../src/index.js";

function point(
  metrics: Map<string, MetricData>,
  name: string,
  queue: string,
): DataPoint<number | Histogram> | undefined {
  const metric = metrics.get(name);
  if (!metric) return undefined;
  return (metric.dataPoints as DataPoint<number | Histogram>[]).find((p) => p.attributes["name"] === queue);
}

function value(metrics: Map<string, MetricData>, name: string, queue: string): number | undefined {
  const p = point(metrics, name, queue);
  return p === undefined ? undefined : (p.value as number);
}

function histogram(metrics: Map<string, MetricData>, name: string, queue: string): Histogram {
  const metric = metrics.get(name);
  assert.ok(metric, `${name} is exported`);
  assert.equal(metric.dataPointType, DataPointType.HISTOGRAM);
  const p = point(metrics, name, queue);
  assert.ok(p, `${name} has a point for ${queue}`);
  return p.value as Histogram;
}

describe("work queue metrics", () => {
  let clock: FakeClock;
  let metrics: TestMetrics;

  beforeEach(() => {
    clock = new FakeClock();
    metrics = new TestMetrics();
  });

  afterEach(async () => {
    await metrics.close();
  });

  it("exports controller-runtime's workqueue metrics, labelled with the queue's name", async () => {
    const queue = new WorkQueue<string>({ name: "deployments", clock, meter: metrics.meter });
    queue.add("a");
    queue.add("b");
    queue.add("a");
    let m = await metrics.collect();
    assert.equal(value(m, "workqueue_adds_total", "deployments"), 2, "the duplicate add queued nothing");
    assert.equal(value(m, "workqueue_depth", "deployments"), 2);
    assert.equal(value(m, "workqueue_unfinished_work_seconds", "deployments"), 0);

    await clock.advance(2_000);
    assert.equal(queue.tryGet(), "a");
    await clock.advance(3_000);
    assert.equal(queue.tryGet(), "b");
    await clock.advance(1_000);
    m = await metrics.collect();
    assert.equal(value(m, "workqueue_depth", "deployments"), 0);
    assert.equal(value(m, "workqueue_unfinished_work_seconds", "deployments"), 4 + 1);
    assert.equal(value(m, "workqueue_longest_running_processor_seconds", "deployments"), 4);
    const waited = histogram(m, "workqueue_queue_duration_seconds", "deployments");
    assert.equal(waited.count, 2);
    assert.equal(waited.sum, 2 + 5);

    queue.done("a");
    queue.done("b");
    queue.addAfter("c", 1_000);
    queue.addRateLimited("d");
    m = await metrics.collect();
    const worked = histogram(m, "workqueue_work_duration_seconds", "deployments");
    assert.equal(worked.count, 2);
    assert.equal(worked.sum, 4 + 1);
    assert.deepEqual(
      worked.buckets.boundaries,
      [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000],
    );
    assert.equal(value(m, "workqueue_retries_total", "deployments"), 2);
    assert.equal(value(m, "workqueue_unfinished_work_seconds", "deployments"), 0);
    assert.equal(value(m, "workqueue_longest_running_processor_seconds", "deployments"), 0);
    assert.equal(m.get("workqueue_queue_duration_seconds")?.descriptor.unit, "s");
  });

  it("keeps queues on one meter apart by name", async () => {
    const meter = metrics.meter;
    const pods = new WorkQueue<string>({ name: "pods", clock, meter });
    const nodes = new WorkQueue<string>({ name: "nodes", clock, meter });
    pods.add("p1");
    pods.add("p2");
    nodes.add("n1");
    const m = await metrics.collect();
    assert.equal(value(m, "workqueue_depth", "pods"), 2);
    assert.equal(value(m, "workqueue_depth", "nodes"), 1);
    assert.equal(value(m, "workqueue_adds_total", "pods"), 2);
    assert.equal(value(m, "workqueue_adds_total", "nodes"), 1);
  });

  it("counts a re-add during processing in depth and adds", async () => {
    const queue = new WorkQueue<string>({ name: "q", clock, meter: metrics.meter });
    queue.add("a");
    queue.tryGet();
    queue.add("a");
    const m = await metrics.collect();
    assert.equal(value(m, "workqueue_depth", "q"), 1);
    assert.equal(value(m, "workqueue_adds_total", "q"), 2);
  });
});

describe("WorkQueue.oldestWaitingMs", () => {
  it("is how long the item queued longest and not handed out has waited", async () => {
    const clock = new FakeClock();
    const metrics = new TestMetrics();
    const queue = new WorkQueue<string>({ name: "backlog", clock, meter: metrics.meter });
    assert.equal(queue.oldestWaitingMs(), 0);
    queue.add("a");
    await clock.advance(300);
    queue.add("b");
    await clock.advance(200);
    assert.equal(queue.oldestWaitingMs(), 500);
    const first = await queue.get();
    assert.equal(first, "a");
    assert.equal(queue.oldestWaitingMs(), 200, "a is being processed, not waiting");
    queue.done("a");
    queue.done((await queue.get())!);
    assert.equal(queue.oldestWaitingMs(), 0);
    queue.close();
    await metrics.close();
  });
});
