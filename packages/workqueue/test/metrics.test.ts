import { strict as assert } from "node:assert";
import {
  DataPointType,
  MeterProvider,
  MetricReader,
  type DataPoint,
  type Histogram,
  type MetricData,
} from "@opentelemetry/sdk-metrics";
import { FakeClock, WorkQueue } from "../src/index.js";

/** A reader the test collects from on demand. */
class OnDemandReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

async function collect(reader: MetricReader): Promise<Map<string, MetricData>> {
  const { resourceMetrics } = await reader.collect();
  const byName = new Map<string, MetricData>();
  for (const scope of resourceMetrics.scopeMetrics)
    for (const metric of scope.metrics) byName.set(metric.descriptor.name, metric);
  return byName;
}

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
  let reader: OnDemandReader;
  let provider: MeterProvider;

  beforeEach(() => {
    clock = new FakeClock();
    reader = new OnDemandReader();
    provider = new MeterProvider({ readers: [reader] });
  });

  afterEach(async () => {
    await provider.shutdown();
  });

  it("exports controller-runtime's workqueue metrics, labelled with the queue's name", async () => {
    const queue = new WorkQueue<string>({ name: "deployments", clock, meter: provider.getMeter("tessera") });
    queue.add("a");
    queue.add("b");
    queue.add("a");
    let m = await collect(reader);
    assert.equal(value(m, "workqueue_adds_total", "deployments"), 2, "the duplicate add queued nothing");
    assert.equal(value(m, "workqueue_depth", "deployments"), 2);
    assert.equal(value(m, "workqueue_unfinished_work_seconds", "deployments"), 0);

    await clock.advance(2_000);
    assert.equal(queue.tryGet(), "a");
    await clock.advance(3_000);
    assert.equal(queue.tryGet(), "b");
    await clock.advance(1_000);
    m = await collect(reader);
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
    m = await collect(reader);
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
    const meter = provider.getMeter("tessera");
    const pods = new WorkQueue<string>({ name: "pods", clock, meter });
    const nodes = new WorkQueue<string>({ name: "nodes", clock, meter });
    pods.add("p1");
    pods.add("p2");
    nodes.add("n1");
    const m = await collect(reader);
    assert.equal(value(m, "workqueue_depth", "pods"), 2);
    assert.equal(value(m, "workqueue_depth", "nodes"), 1);
    assert.equal(value(m, "workqueue_adds_total", "pods"), 2);
    assert.equal(value(m, "workqueue_adds_total", "nodes"), 1);
  });

  it("counts a re-add during processing in depth and adds", async () => {
    const queue = new WorkQueue<string>({ name: "q", clock, meter: provider.getMeter("tessera") });
    queue.add("a");
    queue.tryGet();
    queue.add("a");
    const m = await collect(reader);
    assert.equal(value(m, "workqueue_depth", "q"), 1);
    assert.equal(value(m, "workqueue_adds_total", "q"), 2);
  });
});
