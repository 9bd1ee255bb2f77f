// reconcileOnce builds a reconciler through the manager's injection on the
// FakeClient and reports what one reconcile did.
import { strict as assert } from "node:assert";
import { FakeClock } from "@tessera/core/testing";
import {
  ConfigMaps,
  Tokens,
  defineResource,
  setCondition,
  token,
  type Client,
  type Clock,
  type ControllerBuilder,
  type EventRecorder,
  type KubeObject,
  type ReconcileContext,
  type ReconcilerPlugin,
  type Request,
} from "../src/index.js";
import { FakeClient, reconcileOnce } from "../src/testing.js";
import { ApiError, type ApplyConfiguration } from "@tessera/client";
import type { Condition } from "../src/index.js";
import type { V1ConfigMap } from "@kubernetes/client-node";

interface Widget extends KubeObject {
  spec?: { data?: Record<string, string>; fail?: boolean };
  status?: { conditions?: Condition[] };
}
const Widgets = defineResource<Widget>({
  group: "example.com",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  scope: "Namespaced",
});
const Suffix = token<string>("test.Suffix");

class WidgetReconciler implements ReconcilerPlugin<Widget> {
  static readonly inject = [Tokens.Client, Tokens.EventRecorder, Tokens.Clock] as const;
  constructor(
    private readonly client: Client,
    private readonly events: EventRecorder,
    private readonly clock: Clock,
  ) {}
  controller(on: ControllerBuilder) {
    return on.for(Widgets).owns(ConfigMaps);
  }
  async reconcile({ name, namespace }: Request, ctx: ReconcileContext<Widget>) {
    const widget = ctx.current();
    if (!widget) return;
    if (widget.spec?.fail) throw new Error("told to fail");
    const cm = await this.client.apply(
      ConfigMaps,
      { metadata: { name, namespace }, data: widget.spec?.data ?? {} },
      { controller: widget, force: true },
    );
    this.events.record(widget, {
      type: "Normal",
      reason: "Synced",
      action: "Apply",
      note: "data copied",
      related: cm,
    });
    const { conditions } = setCondition(
      widget.status?.conditions,
      {
        type: "Ready",
        status: "True",
        reason: "Synced",
        message: "",
        observedGeneration: widget.metadata?.generation,
      },
      this.clock.wallTime(),
    );
    await this.client.applyStatus(Widgets, { metadata: { name, namespace }, status: { conditions } });
    return { requeueAfterMs: 60_000 };
  }
}

class SuffixReconciler implements ReconcilerPlugin<Widget> {
  static readonly inject = [Tokens.Client, Suffix] as const;
  constructor(
    private readonly client: Client,
    private readonly suffix: string,
  ) {}
  controller(on: ControllerBuilder) {
    return on.for(Widgets);
  }
  async reconcile({ name, namespace }: Request) {
    await this.client.create(ConfigMaps, { metadata: { name: name + this.suffix, namespace } });
  }
}

const widget: Widget = {
  apiVersion: "example.com/v1",
  kind: "Widget",
  metadata: { name: "w", namespace: "ns" },
  spec: { data: { a: "1" } },
};

/** Counts the ConfigMaps that name the Widget as owner in their data, through an index it declares. */
const ownerOf = (cm: V1ConfigMap) => (cm.data?.["owner"] ? [cm.data["owner"]] : []);
class IndexedReconciler implements ReconcilerPlugin<Widget> {
  static readonly inject = [Tokens.Client] as const;
  constructor(private readonly client: Client) {}
  controller(on: ControllerBuilder) {
    return on.for(Widgets).watches(ConfigMaps, mapToOwner, { indexes: { "data.owner": ownerOf } });
  }
  async reconcile({ name, namespace }: Request, ctx: ReconcileContext<Widget>) {
    const widget = ctx.current();
    if (!widget) return;
    const mine = await this.client.list(ConfigMaps, { namespace, fields: { "data.owner": name } });
    const byLabel = widget.spec?.data?.["byIndex"]
      ? await this.client.list(ConfigMaps, { index: { name: widget.spec.data["byIndex"], value: name } })
      : [];
    await this.client.applyStatus(Widgets, {
      metadata: { name, namespace },
      status: { conditions: [], mine: mine.length, byIndex: byLabel.length },
    } as ApplyConfiguration<Widget>);
  }
}
function mapToOwner(cm: V1ConfigMap) {
  const owner = cm.data?.["owner"];
  return owner ? [{ name: owner, namespace: cm.metadata?.namespace ?? "" }] : [];
}

describe("reconcileOnce", () => {
  it("builds the reconciler through injection, runs one reconcile, returns result, writes and events", async () => {
    const clock = new FakeClock({ wallTime: new Date("2026-03-04T05:06:07Z") });
    const started = performance.now();
    const { result, writes, events, client, error, conditions } = await reconcileOnce(
      WidgetReconciler,
      { name: "w", namespace: "ns" },
      { objects: [widget], resources: [Widgets], clock },
    );
    assert.equal(error, undefined);
    assert.deepEqual(result, { requeueAfterMs: 60_000 });
    assert.deepEqual(
      writes.map((w) => `${w.verb} ${w.kind} ${w.object.metadata?.name}`),
      ["apply ConfigMap w", "applyStatus Widget w"],
    );
    assert.equal(writes[0]!.object.metadata?.ownerReferences?.[0]?.name, "w");
    assert.deepEqual(
      events.map((e) => `${e.type} ${e.reason} ${e.regarding.metadata?.name}`),
      ["Normal Synced w"],
    );
    const after = await client.get(Widgets, { name: "w", namespace: "ns" });
    assert.equal(after?.status?.conditions?.[0]?.lastTransitionTime, "2026-03-04T05:06:07Z");
    assert.deepEqual(
      conditions?.map((c) => `${c.type}=${c.status}`),
      ["Ready=True"],
    );
    assert.ok(performance.now() - started < 500, "a reconcile on the fake takes milliseconds");
  });

  it("a missing object: current() is undefined, nothing written", async () => {
    const outcome = await reconcileOnce(
      WidgetReconciler,
      { name: "nope", namespace: "ns" },
      { resources: [Widgets] },
    );
    assert.deepEqual([outcome.result, outcome.writes, outcome.events], [undefined, [], []]);
  });

  it("a reconcile that throws: the error is returned, with the writes made before it", async () => {
    const failing = { ...widget, spec: { fail: true } };
    const outcome = await reconcileOnce(
      WidgetReconciler,
      { name: "w", namespace: "ns" },
      {
        objects: [failing],
        resources: [Widgets],
      },
    );
    assert.match(String(outcome.error), /told to fail/);
    assert.deepEqual(outcome.writes, []);
  });

  it("tokens of your own through provide; an unbound one fails as the manager's check does", async () => {
    const outcome = await reconcileOnce(
      SuffixReconciler,
      { name: "w", namespace: "ns" },
      {
        objects: [widget],
        resources: [Widgets],
        provide: [[Suffix, "-x"]],
      },
    );
    assert.deepEqual(
      outcome.writes.map((w) => w.object.metadata?.name),
      ["w-x"],
    );
    await assert.rejects(
      reconcileOnce(SuffixReconciler, { name: "w", namespace: "ns" }, { resources: [Widgets] }),
      /test\.Suffix/,
    );
  });

  it("a second reconcile on the same fake sees the first one's writes; writes are per reconcile", async () => {
    const first = await reconcileOnce(
      WidgetReconciler,
      { name: "w", namespace: "ns" },
      {
        objects: [widget],
        resources: [Widgets],
      },
    );
    const second = await reconcileOnce(
      WidgetReconciler,
      { name: "w", namespace: "ns" },
      { client: first.client },
    );
    // The ConfigMap and the condition are already so: the apply and the status apply store nothing new.
    assert.deepEqual(
      second.writes.map((w) => `${w.verb} ${w.kind}`),
      [],
    );
  });

  it("declares the reconciler's indexes on the fake, so its indexed reads work, and a missing one fails as in the manager", async () => {
    const cm = (name: string, owner: string, namespace = "ns") => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name, namespace },
      data: { owner },
    });
    const objects = [
      { ...widget, spec: { data: {} } },
      cm("a", "w"),
      cm("b", "w"),
      cm("c", "other"),
      cm("d", "w", "elsewhere"),
    ];
    const request = { name: "w", namespace: "ns" };
    const status = (o: { client: { peek: FakeClient["peek"] } }) =>
      (o.client.peek(Widgets, request) as { status?: { mine?: number; byIndex?: number } }).status;

    const counted = await reconcileOnce(IndexedReconciler, request, { objects, resources: [Widgets] });
    assert.equal(counted.error, undefined);
    assert.equal(status(counted)?.mine, 2);

    const extra = { ...widget, spec: { data: { byIndex: "by-label" } } };
    const missing = await reconcileOnce(IndexedReconciler, request, {
      objects: [extra],
      resources: [Widgets],
    });
    assert.ok(missing.error instanceof ApiError, String(missing.error));
    assert.equal(missing.error.reason, "IndexNotDeclared");
    assert.match(missing.error.message, /no index "by-label" on the cache of configmaps/);

    // An index the test adds (one another controller of the manager declares).
    const byLabel = (o: V1ConfigMap) => (o.data?.["owner"] ? [o.data["owner"]] : []);
    const given = await reconcileOnce(IndexedReconciler, request, {
      objects: [extra, cm("a", "w")],
      resources: [Widgets],
      indexes: [[ConfigMaps, { "by-label": byLabel }]],
    });
    assert.equal(given.error, undefined);
    assert.equal(status(given)?.byIndex, 1);
  });

  it("serves ctx.owned from the fake by the owner index, and ctx.related by a declared index", async () => {
    const owned: string[][] = [];
    class ChildReader implements ReconcilerPlugin<Widget> {
      controller(on: ControllerBuilder) {
        return on
          .for(Widgets, {
            indexes: { "data.owner": (w) => (w.spec?.data?.["owner"] ? [w.spec.data["owner"]] : []) },
          })
          .owns(ConfigMaps);
      }
      async reconcile(_request: Request, ctx: ReconcileContext<Widget>) {
        owned.push((await ctx.owned(ConfigMaps)).map((c) => c.metadata?.name ?? "").sort());
        owned.push((await ctx.related(Widgets, "data.owner", "x")).map((w) => w.metadata?.name ?? ""));
      }
    }
    const child = (name: string, uid: string, controller: boolean) => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name,
        namespace: "ns",
        ownerReferences: [{ apiVersion: "example.com/v1", kind: "Widget", name: "w", uid, controller }],
      },
    });
    const owner: Widget = { ...widget, spec: { data: { owner: "x" } } };
    const client = new FakeClient({ resources: [Widgets], objects: [owner] });
    // The fake gives a created object its uid, as the server does.
    const uid = client.peek(Widgets, { namespace: "ns", name: "w" })?.metadata?.uid ?? "";
    for (const object of [
      child("mine-1", uid, true),
      child("mine-2", uid, true),
      child("only-referenced", uid, false),
      child("someone-elses", "uid-other", true),
    ])
      client.seed(object);
    const outcome = await reconcileOnce(ChildReader, { namespace: "ns", name: "w" }, { client });
    assert.equal(outcome.error, undefined);
    assert.deepEqual(owned, [["mine-1", "mine-2"], ["w"]]);
  });
});
