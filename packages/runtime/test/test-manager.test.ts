// The test manager runs the manager's controllers on the FakeClient's watch,
// on a fake clock: settle() and advance() instead of waiting.
import { strict as assert } from "node:assert";
import { EventEmitter } from "node:events";
import { FakeClock } from "@tessera/core/testing";
import {
  CleanupResult,
  ConfigMaps,
  Secrets,
  Tokens,
  defineResource,
  type Client,
  type ControllerBuilder,
  type KubeObject,
  type ReconcileContext,
  type ReconcilerPlugin,
  type Request,
} from "../src/index.js";
import { serverErrors, testManager, type TestManager } from "../src/testing.js";

interface Widget extends KubeObject {
  spec?: { data?: Record<string, string>; secret?: string; every?: number };
}
const Widgets = defineResource<Widget>({
  group: "example.com",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  scope: "Namespaced",
});
const ref = { name: "w", namespace: "ns" };
const widget = (spec: Widget["spec"]): Widget => ({
  apiVersion: "example.com/v1",
  kind: "Widget",
  metadata: { ...ref },
  spec,
});

/** A ConfigMap with the Widget's data and the data of the Secret it names; requeues after `spec.every` ms. */
class WidgetReconciler implements ReconcilerPlugin<Widget> {
  static readonly inject = [Tokens.Client] as const;
  constructor(private readonly client: Client) {}
  controller(on: ControllerBuilder) {
    return on
      .for(Widgets)
      .owns(ConfigMaps)
      .watches(Secrets, async (secret, { client, signal }) => {
        // An async mapping through the MapContext's client (the caches).
        const widgets = await client.list(Widgets, { namespace: secret.metadata?.namespace, signal });
        return widgets
          .filter((w) => w.spec?.secret === secret.metadata?.name)
          .map((w) => ({ name: w.metadata!.name!, namespace: w.metadata!.namespace! }));
      });
  }
  async reconcile({ name, namespace }: Request, ctx: ReconcileContext<Widget>) {
    const w = ctx.current();
    if (!w) return;
    const secret = w.spec?.secret
      ? await this.client.get(Secrets, { name: w.spec.secret, namespace })
      : undefined;
    const data = { ...w.spec?.data, ...secret?.stringData, ...secret?.data };
    await this.client.apply(
      ConfigMaps,
      { metadata: { name, namespace }, data },
      { controller: w, force: true },
    );
    return w.spec?.every ? { requeueAfterMs: w.spec.every } : undefined;
  }
}

describe("testManager", () => {
  let env: TestManager | undefined;
  afterEach(async () => {
    await env?.stop();
    env = undefined;
  });

  it("creates the owned ConfigMap, and changes it when the watched Secret changes, with no waits", async () => {
    const started = performance.now();
    env = await testManager({
      register: [WidgetReconciler],
      resources: [Widgets],
      objects: [
        widget({ data: { a: "1" }, secret: "s" }),
        {
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name: "s", namespace: "ns" },
          data: { b: "Mg==" },
        } as KubeObject,
      ],
    });
    await env.settle();
    assert.deepEqual(env.client.peek(ConfigMaps, ref)?.data, { a: "1", b: "Mg==" });
    const owner = env.client.peek(Widgets, ref);
    assert.equal(env.client.peek(ConfigMaps, ref)?.metadata?.ownerReferences?.[0]?.uid, owner?.metadata?.uid);
    const before = env.reconciles.length;

    // The Secret changes: the async mapping finds the Widget, and its ConfigMap follows.
    const secret = env.client.peek(Secrets, { name: "s", namespace: "ns" })!;
    await env.client.update(Secrets, { ...secret, data: { b: "Mw==" } });
    await env.settle();
    assert.deepEqual(env.client.peek(ConfigMaps, ref)?.data, { a: "1", b: "Mw==" });
    assert.ok(env.reconciles.length > before, "the Secret's change reconciled the Widget");

    // The Widget changes.
    const live = env.client.peek(Widgets, ref)!;
    await env.client.update(Widgets, { ...live, spec: { ...live.spec, data: { a: "2" } } });
    await env.settle();
    assert.deepEqual(env.client.peek(ConfigMaps, ref)?.data, { a: "2", b: "Mw==" });
    assert.ok(env.reconciles.every((r) => r.error === undefined));
    console.log(`      three changes settled in ${(performance.now() - started).toFixed(0)} ms`);
  });

  it("puts back an owned ConfigMap changed by someone else (owns maps it to its owner)", async () => {
    env = await testManager({
      register: [WidgetReconciler],
      resources: [Widgets],
      objects: [widget({ data: { a: "1" } })],
    });
    await env.settle();
    const cm = env.client.peek(ConfigMaps, ref)!;
    await env.client.update(ConfigMaps, { ...cm, data: { a: "tampered" } });
    await env.settle();
    assert.deepEqual(env.client.peek(ConfigMaps, ref)?.data, { a: "1" });
  });

  it("leaves a requeueAfter waiting until the clock is moved", async () => {
    const clock = new FakeClock();
    env = await testManager({
      register: [WidgetReconciler],
      resources: [Widgets],
      objects: [widget({ data: { a: "1" }, every: 30_000 })],
      clock,
    });
    await env.settle();
    // Twice at 0: the Widget, then again for the ConfigMap it created (owns maps it back).
    assert.deepEqual(
      env.reconciles.map((r) => r.at),
      [0, 0],
    );
    await env.advance(29_000);
    assert.equal(env.reconciles.length, 2, "not yet due");
    await env.advance(2_000);
    assert.equal(env.reconciles.length, 3, "due: reconciled again");
    assert.ok(env.reconciles[2]!.at >= 30_000);
    // settle({ advance: true }) would never end here (it always requeues): it says so.
    await assert.rejects(env.settle({ advance: true, limitMs: 100_000 }), /always requeues never settles/);
  });

  it("retries a failed reconcile after the rate limiter's backoff when settle advances the clock", async () => {
    env = await testManager({
      register: [WidgetReconciler],
      resources: [Widgets],
      objects: [widget({ data: { a: "1" } })],
    });
    const conflict = env.client.intercept({ verb: "apply", resource: ConfigMaps, times: 2 }, (call) => {
      throw serverErrors.conflict(call.context, ConfigMaps, "w");
    });
    await env.settle();
    assert.equal(env.client.peek(ConfigMaps, ref), undefined, "the failed reconcile waits for its backoff");
    assert.equal(env.reconciles.length, 1);
    await env.settle({ advance: true });
    assert.equal(conflict.calls, 2);
    assert.deepEqual(
      env.reconciles.map((r) => [r.attempt, r.error === undefined]),
      [
        [1, false],
        [2, false],
        [3, true],
        // The ConfigMap's creation, mapped to its owner: a new request, attempt 1.
        [1, true],
      ],
    );
    assert.deepEqual(env.client.peek(ConfigMaps, ref)?.data, { a: "1" });
  });

  it("runs a managed finalizer's cleanup on delete, and the object goes once the finalizer is removed", async () => {
    let cleanups = 0;
    class Finalized extends WidgetReconciler {
      override controller(on: ControllerBuilder) {
        return on.for(Widgets).owns(ConfigMaps).finalizer("example.com/cleanup");
      }
      cleanup(_object: Widget, _ctx: ReconcileContext<Widget>) {
        // Kept once, then done: the runtime requeues and removes the finalizer after.
        return ++cleanups === 1 ? CleanupResult.keep({ requeueAfterMs: 1_000 }) : CleanupResult.done;
      }
    }
    env = await testManager({
      register: [Finalized],
      resources: [Widgets],
      objects: [widget({ data: { a: "1" } })],
    });
    await env.settle();
    assert.deepEqual(env.client.peek(Widgets, ref)?.metadata?.finalizers, ["example.com/cleanup"]);
    await env.client.delete(Widgets, ref);
    await env.settle();
    assert.equal(cleanups, 1);
    assert.ok(env.client.peek(Widgets, ref)?.metadata?.deletionTimestamp, "kept: still there");
    await env.settle({ advance: true });
    assert.equal(cleanups, 2);
    assert.equal(env.client.peek(Widgets, ref), undefined, "gone with its finalizer");
    // The ConfigMap's creation reconciles the Widget again; its deletion once more (ctx.current() undefined).
    assert.deepEqual(
      env.reconciles.map((r) => r.method),
      ["reconcile", "reconcile", "cleanup", "cleanup", "reconcile"],
    );
  });

  it("reads triggers, and enqueue and reconcileAll queue as the manager's do", async () => {
    const emitter = new EventEmitter();
    class Triggered extends WidgetReconciler {
      override controller(on: ControllerBuilder) {
        return on.for(Widgets).owns(ConfigMaps).triggers(emitter);
      }
    }
    env = await testManager({
      register: [Triggered],
      resources: [Widgets],
      objects: [widget({ data: { a: "1" } })],
    });
    await env.settle();
    assert.equal(env.reconciles.length, 2);
    emitter.emit("request", ref);
    await env.settle();
    assert.equal(env.reconciles.length, 3);
    assert.equal(env.enqueue("widget", ref), true);
    await env.settle();
    assert.equal(env.reconcileAll("widget"), 1);
    await env.settle();
    assert.equal(env.reconciles.length, 5);
    assert.throws(() => env!.enqueue("gadget", ref), /no controller is named "gadget"; it runs "widget"/);
  });

  it("runs the primary's predicates: a status-only update reconciles nothing, a spec change does", async () => {
    env = await testManager({
      register: [WidgetReconciler],
      resources: [Widgets],
      objects: [widget({ data: { a: "1" } })],
    });
    await env.settle();
    const settled = env.reconciles.length;
    const live = env.client.peek(Widgets, ref)!;
    await env.client.updateStatus(Widgets, { ...live, status: { seen: true } } as Widget);
    await env.settle();
    assert.equal(env.reconciles.length, settled, "status-only: filtered by specOrMetadataChanged");
    const again = env.client.peek(Widgets, ref)!;
    await env.client.update(Widgets, { ...again, spec: { data: { a: "2" } } });
    await env.settle();
    // The spec change, then the ConfigMap's change it wrote (owns maps it back to the Widget).
    assert.equal(env.reconciles.length, settled + 2);
  });

  it("resyncs every object once per maxIntervalMs as the clock passes it", async () => {
    class Resynced extends WidgetReconciler {
      override controller(on: ControllerBuilder) {
        return on.for(Widgets).owns(ConfigMaps).withOptions({ maxIntervalMs: 60_000 });
      }
    }
    env = await testManager({
      register: [Resynced],
      resources: [Widgets],
      objects: [widget({ data: { a: "1" } })],
    });
    await env.settle();
    const settled = env.reconciles.length;
    await env.advance(3 * 60_000);
    // Three periods (the first deadline falls at random within the first), give or take a one-second bucket.
    const resyncs = env.reconciles.length - settled;
    assert.ok(resyncs >= 2 && resyncs <= 4, `resynced ${resyncs} times in 180 s`);
  });

  it("fails settle() with what is busy when a reconcile waits on the clock", async () => {
    const clock = new FakeClock();
    env = await testManager({
      register: [WidgetReconciler],
      resources: [Widgets],
      objects: [widget({})],
      clock,
    });
    // Every apply is delayed by 5 s on the fake clock.
    env.client.intercept({ verb: "apply" }, async (_call, next) => {
      await new Promise<void>((resolve) => clock.setTimer(5_000, resolve));
      return next();
    });
    await assert.rejects(env.settle(), /controller widget: 1 reconciling.*waits on the clock/);
    await env.advance(5_000);
    assert.ok(env.client.peek(ConfigMaps, ref));
  });

  it("names a kind the fake does not serve", async () => {
    await assert.rejects(
      testManager({ register: [WidgetReconciler] }),
      /the fake serves no widgets\.example\.com; give its handle in options\.resources/,
    );
  });
});
