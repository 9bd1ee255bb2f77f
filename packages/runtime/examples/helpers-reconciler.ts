import {
  ConfigMaps,
  defineResource,
  type KubeObject,
  applyStatusIfChanged,
  handleFinalizer,
  setCondition,
  Tokens,
} from "@tessera/runtime";
import type {
  Client,
  Condition,
  ControllerBuilder,
  EventRecorder,
  ReconcileContext,
  Request,
  Clock,
} from "@tessera/runtime";

type Gadget = KubeObject & {
  metadata?: KubeObject["metadata"] & { generation?: number };
  spec?: { size?: string };
  status?: { conditions?: Condition[] };
};
const spec = { group: "example.com", version: "v1", kind: "Gadget", plural: "gadgets" } as const;
const Gadgets = defineResource<Gadget>({ ...spec, scope: "Namespaced" });

/** The helpers in one reconciler: finalizer, owned object, conditions, status, events. */
export class GadgetReconciler {
  static readonly inject = [Tokens.ApiClient, Tokens.EventRecorder, Tokens.Clock] as const;
  constructor(
    private readonly api: Client,
    private readonly events: EventRecorder,
    private readonly clock: Clock,
  ) {}

  controller(on: ControllerBuilder) {
    return on.for(Gadgets).owns(ConfigMaps);
  }

  async reconcile({ name, namespace }: Request, ctx: ReconcileContext<Gadget>) {
    const gadget = ctx.current();
    if (!gadget) return;
    const release = () =>
      Promise.resolve(
        this.events.record(gadget, { type: "Normal", reason: "Released", action: "Delete", note: "" }),
      );
    if ((await handleFinalizer(this.api, Gadgets, gadget, "example.com/release", release)) !== "active")
      return;
    await this.api.apply(
      ConfigMaps,
      { metadata: { name, namespace }, data: { size: gadget.spec?.size ?? "M" } },
      { controller: gadget, force: true, signal: ctx.signal },
    );
    const ready = {
      type: "Ready",
      status: "True" as const,
      reason: "Applied",
      observedGeneration: gadget.metadata?.generation,
    };
    const { conditions } = setCondition(gadget.status?.conditions, ready, this.clock.wallTime());
    // No request at all when the status already says so.
    await applyStatusIfChanged(this.api, Gadgets, gadget, { conditions }, { force: true });
  }
}
