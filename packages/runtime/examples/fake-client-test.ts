import { strict as assert } from "node:assert";
import { CapturingLogger } from "@tessera/core/testing";
import { ConfigMaps, defineResource, retryOnConflict, type KubeObject } from "@tessera/runtime";
import type { Client, ReconcileContext, Request } from "@tessera/runtime";
import { FakeClient, serverErrors } from "@tessera/runtime/testing";

type Widget = KubeObject & { spec?: { data?: Record<string, string> } };
const Widgets = defineResource<Widget>({
  group: "example.com",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  scope: "Namespaced",
});

/** Keeps a ConfigMap holding the Widget's data; labels the Widget as synced. */
class WidgetReconciler {
  constructor(private readonly client: Client) {}
  async reconcile({ name, namespace }: Request, ctx: ReconcileContext<Widget>): Promise<void> {
    const widget = ctx.current();
    if (!widget) return;
    await this.client.apply(
      ConfigMaps,
      { metadata: { name, namespace }, data: widget.spec?.data },
      {
        controller: widget,
        force: true,
      },
    );
    await retryOnConflict("label the Widget", async () => {
      const live = await this.client.get(Widgets, { name, namespace });
      if (!live) return;
      const labels = { ...live.metadata?.labels, synced: "true" };
      await this.client.update(Widgets, { ...live, metadata: { ...live.metadata, labels } });
    });
  }
}

describe("WidgetReconciler, on the fake client", () => {
  it("writes the ConfigMap and labels the Widget, through a conflict", async () => {
    const fake = new FakeClient({ resources: [Widgets] });
    await fake.create(Widgets, { metadata: { name: "w", namespace: "ns" }, spec: { data: { a: "1" } } });
    // The first update of the Widget fails as a concurrent writer would make it fail.
    const conflict = fake.intercept({ verb: "update", resource: Widgets, name: "w", times: 1 }, (call) => {
      throw serverErrors.conflict(call.context, Widgets, "w");
    });
    const request = { name: "w", namespace: "ns" };
    const widget = await fake.get(Widgets, request);
    const ctx: ReconcileContext<Widget> = {
      signal: new AbortController().signal,
      logger: new CapturingLogger(),
      attempt: 1,
      current: () => widget,
      // This reconciler reads no children; reconcileOnce serves ctx.owned and ctx.related from the fake.
      owned: () => Promise.resolve([]),
      related: () => Promise.resolve([]),
    };

    await new WidgetReconciler(fake).reconcile(request, ctx);

    assert.equal(conflict.calls, 1);
    assert.deepEqual((await fake.get(ConfigMaps, request))?.data, { a: "1" });
    assert.equal((await fake.get(Widgets, request))?.metadata?.labels?.["synced"], "true");
    assert.deepEqual(
      fake.writes.map((w) => `${w.verb} ${w.kind}`),
      ["create Widget", "apply ConfigMap", "update Widget"],
    );
  });
});
