import {
  ConfigMaps,
  defineResource,
  type KubeObject,
  Manager,
  runMain,
  Tokens,
  type Client,
  type ControllerBuilder,
} from "@tessera/runtime";
import type { ReconcileContext, ReconcilerPlugin, Request } from "@tessera/runtime";

type Widget = KubeObject & { spec?: { data?: Record<string, string> } };
const spec = { group: "example.com", version: "v1", kind: "Widget", plural: "widgets" } as const;
const Widgets = defineResource<Widget>({ ...spec, scope: "Namespaced" });

/** Keeps a ConfigMap holding each Widget's spec.data, owned by the Widget. */
class WidgetReconciler implements ReconcilerPlugin<Widget> {
  static readonly inject = [Tokens.Client] as const;
  constructor(private readonly client: Client) {}

  controller(on: ControllerBuilder) {
    return on.for(Widgets).owns(ConfigMaps).mode("sharded");
  }

  async reconcile({ name, namespace }: Request, ctx: ReconcileContext<Widget>) {
    const widget = ctx.current(); // from the cache; undefined once deleted
    if (!widget) return; // the ConfigMap goes with its owner (garbage collection)
    const owner = { apiVersion: Widgets.apiVersion, kind: Widgets.kind, name, uid: widget.metadata!.uid! };
    await this.client.apply(
      ConfigMaps,
      {
        metadata: { name, namespace, ownerReferences: [{ ...owner, controller: true }] },
        data: widget.spec?.data,
      },
      { force: true, signal: ctx.signal },
    );
  }
}

await runMain(async (signal) => {
  const manager = await Manager.create({ config: { name: "widgets" } }); // + TESSERA_* settings
  manager.register(WidgetReconciler);
  await manager.run(signal); // until SIGTERM; then drains and hands back its slots
});
