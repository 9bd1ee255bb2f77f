import { strict as assert } from "node:assert";
import { ConfigMaps, Secrets, Tokens, defineResource, type KubeObject } from "@tessera/runtime";
import type {
  Client,
  ControllerBuilder,
  ReconcileContext,
  ReconcilerPlugin,
  Request,
} from "@tessera/runtime";
import { testManager } from "@tessera/runtime/testing";

type Widget = KubeObject & { spec?: { data?: Record<string, string>; secret?: string } };
const Widgets = defineResource<Widget>({
  group: "example.com",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  scope: "Namespaced",
});

/** Keeps a ConfigMap with the Widget's data and the keys of the Secret it names. */
class WidgetReconciler implements ReconcilerPlugin<Widget> {
  static readonly inject = [Tokens.Client] as const;
  constructor(private readonly client: Client) {}
  controller(on: ControllerBuilder) {
    return on
      .for(Widgets)
      .owns(ConfigMaps)
      .watches(Secrets, async (secret, { client, signal }) => {
        // A Secret's change reconciles the Widgets that name it.
        const widgets = await client.list(Widgets, { namespace: secret.metadata?.namespace, signal });
        return widgets
          .filter((w) => w.spec?.secret === secret.metadata?.name)
          .map((w) => ({ name: w.metadata?.name ?? "", namespace: w.metadata?.namespace ?? "" }));
      });
  }
  async reconcile({ name, namespace }: Request, ctx: ReconcileContext<Widget>) {
    const widget = ctx.current();
    if (!widget) return;
    const secretName = widget.spec?.secret;
    const secret = secretName ? await this.client.get(Secrets, { name: secretName, namespace }) : undefined;
    const keys = Object.keys(secret?.data ?? {})
      .sort()
      .join(",");
    const data = { ...widget.spec?.data, keys };
    await this.client.apply(
      ConfigMaps,
      { metadata: { name, namespace }, data },
      { controller: widget, force: true },
    );
  }
}

describe("WidgetReconciler, in the test manager", () => {
  it("follows the Widget and the Secret it names, with no waits", async () => {
    const ref = { name: "w", namespace: "ns" };
    const widget = {
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: ref,
      spec: { data: { a: "1" }, secret: "s" },
    };
    const env = await testManager({ register: [WidgetReconciler], resources: [Widgets], objects: [widget] });
    try {
      const secret = await env.client.create(Secrets, {
        metadata: { name: "s", namespace: "ns" },
        data: { user: "dQ==" },
      });
      await env.settle(); // the Widget's reconciles, and those its new ConfigMap causes
      assert.deepEqual(env.client.peek(ConfigMaps, ref)?.data, { a: "1", keys: "user" });

      await env.client.update(Secrets, { ...secret, data: { user: "dQ==", password: "cA==" } });
      await env.settle(); // the mapping found the Widget, and its ConfigMap followed
      assert.deepEqual(env.client.peek(ConfigMaps, ref)?.data, { a: "1", keys: "password,user" });
    } finally {
      await env.stop();
    }
  });
});
