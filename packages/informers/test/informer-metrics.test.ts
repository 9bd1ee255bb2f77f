import { strict as assert } from "node:assert";
import { TestMetrics } from "@tessera/core/testing";
import { InformerHarness, settle, widget } from "./informer-harness.js";

describe("informer metrics", () => {
  it("reports objects cached, each handler's queue depth, deliveries by type and handler failures", async () => {
    const metrics = new TestMetrics();
    const h = new InformerHarness({ meter: metrics.meter, name: "widgets" });
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
      h.lw.delete("default/w-2");
      await settle(() => fine.pending === 0 && blocked.pending === 8);

      const base = { informer: "widgets", resource: h.lw.resource };
      assert.equal(await metrics.value("tessera_informer_objects", base), 4);
      assert.equal(
        await metrics.value("tessera_informer_objects", { ...base, cache: "own" }),
        4,
        'an informer made directly reports cache="own"',
      );
      assert.equal(
        await metrics.value("tessera_informer_handler_queue_depth", { ...base, handler: "blocked" }),
        8,
      );
      assert.equal(
        await metrics.value("tessera_informer_handler_queue_depth", { ...base, handler: "fine" }),
        0,
      );
      const delivered = (handler: string, type: string): Promise<number | undefined> =>
        metrics.value("tessera_informer_events_delivered_total", { ...base, handler, type });
      assert.equal(await delivered("fine", "add"), 5);
      assert.equal(await delivered("fine", "update"), 2);
      assert.equal(await delivered("fine", "delete"), 1);
      assert.equal(await delivered("blocked", "add"), undefined, "nothing finished yet");
      assert.equal(
        await metrics.value("tessera_informer_handler_errors_total", { ...base, handler: "fine" }),
        1,
      );

      release();
      await blocked.whenIdle();
      assert.equal(await delivered("blocked", "add"), 5);
      assert.equal(
        await metrics.value("tessera_informer_handler_queue_depth", { ...base, handler: "blocked" }),
        0,
      );
    } finally {
      await h.stop();
      await metrics.close();
    }
  });
});
