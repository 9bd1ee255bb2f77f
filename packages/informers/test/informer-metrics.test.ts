import { strict as assert } from "node:assert";
import { MeterProvider, MetricReader, type DataPoint, type MetricData } from "@opentelemetry/sdk-metrics";
import { InformerHarness, settle, widget } from "./informer-harness.js";

/** A reader the test collects from on demand. */
class OnDemandReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

async function collect(reader: MetricReader): Promise<Map<string, DataPoint<number>[]>> {
  const { resourceMetrics } = await reader.collect();
  const byName = new Map<string, DataPoint<number>[]>();
  for (const scope of resourceMetrics.scopeMetrics)
    for (const metric of scope.metrics as MetricData[])
      byName.set(metric.descriptor.name, metric.dataPoints as DataPoint<number>[]);
  return byName;
}

function value(
  points: Map<string, DataPoint<number>[]>,
  name: string,
  attributes: Record<string, string>,
): number | undefined {
  const p = points
    .get(name)
    ?.find((d) => Object.entries(attributes).every(([k, v]) => d.attributes[k] === v));
  return p?.value;
}

describe("informer metrics", () => {
  it("reports objects cached, each handler's queue depth, deliveries by type and handler failures", async () => {
    const reader = new OnDemandReader();
    const provider = new MeterProvider({ readers: [reader] });
    const h = new InformerHarness({ meter: provider.getMeter("test"), name: "widgets" });
    try {
      for (let i = 0; i < 5; i++) h.lw.put(widget(`w-${i}`));
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const blocked = h.informer.addEventHandler({ onAdd: () => gate }, { name: "blocked" });
      const fine = h.informer.addEventHandler(
        {
          onUpdate: (_o, n) => {
            if (n.metadata.name === "w-0") throw new Error("refused");
          },
        },
        { name: "fine" },
      );
      await h.start();
      await fine.whenIdle();
      h.lw.put(widget("w-0", "default", 1));
      h.lw.put(widget("w-1", "default", 1));
      h.lw.remove("default/w-2");
      await settle(() => fine.pending === 0 && blocked.pending === 8);

      let points = await collect(reader);
      const base = { informer: "widgets", resource: h.lw.resource };
      assert.equal(value(points, "tessera_informer_objects", base), 4);
      assert.equal(value(points, "tessera_informer_handler_queue_depth", { ...base, handler: "blocked" }), 8);
      assert.equal(value(points, "tessera_informer_handler_queue_depth", { ...base, handler: "fine" }), 0);
      const delivered = (handler: string, type: string): number | undefined =>
        value(points, "tessera_informer_events_delivered_total", { ...base, handler, type });
      assert.equal(delivered("fine", "add"), 5);
      assert.equal(delivered("fine", "update"), 2);
      assert.equal(delivered("fine", "delete"), 1);
      assert.equal(delivered("blocked", "add"), undefined, "nothing finished yet");
      assert.equal(value(points, "tessera_informer_handler_errors_total", { ...base, handler: "fine" }), 1);

      release();
      await blocked.whenIdle();
      points = await collect(reader);
      assert.equal(delivered("blocked", "add"), 5);
      assert.equal(value(points, "tessera_informer_handler_queue_depth", { ...base, handler: "blocked" }), 0);
    } finally {
      await h.shutdown();
      await provider.shutdown();
    }
  });
});
