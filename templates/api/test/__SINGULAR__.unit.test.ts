import { strict as assert } from "node:assert";
import { ConfigMaps, isConflict } from "@tessera/runtime";
import { FakeClient, reconcileOnce, serverErrors, testManager } from "@tessera/runtime/testing";
import { __KIND__Reconciler } from "../src/controllers/__SINGULAR__.js";
import { __HANDLE__, type __KIND__ } from "../src/generated/index.js";

// One reconcile at a time on the in-memory FakeClient of @tessera/runtime/testing:
// no cluster, milliseconds per case. It answers as the API server does (a
// differential test holds it to one), but knows no schema, admission or
// garbage collection: those are the control-plane test's (__SINGULAR__.test.ts).
const request = { name: "first", namespace: "default" };

function __SINGULAR__(spec: __KIND__["spec"]): __KIND__ {
  return { apiVersion: "__GROUP__/__VERSION__", kind: "__KIND__", metadata: { ...request }, spec };
}

describe("__KIND__Reconciler, one reconcile on the fake client", function () {
  it("applies an owned ConfigMap with spec.data and reports Ready in status", async () => {
    const { result, error, writes, events, conditions, client } = await reconcileOnce(
      __KIND__Reconciler,
      request,
      { objects: [__SINGULAR__({ data: { greeting: "hello" } })], resources: [__HANDLE__] },
    );
    assert.equal(error, undefined);
    assert.equal(result, undefined);
    assert.deepEqual(
      writes.map((w) => `${w.verb} ${w.kind} ${w.object.metadata?.name}`),
      ["apply ConfigMap first", "applyStatus __KIND__ first"],
    );

    const owner = client.peek(__HANDLE__, request);
    const cm = client.peek(ConfigMaps, request);
    assert.deepEqual(cm?.data, { greeting: "hello" });
    // The controller reference is what lets the garbage collector delete it with its owner.
    assert.deepEqual(
      cm?.metadata?.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller]),
      [["__KIND__", "first", owner?.metadata?.uid, true]],
    );

    const ready = conditions?.find((c) => c.type === "Ready");
    assert.equal(ready?.status, "True");
    assert.equal(ready?.reason, "ConfigMapApplied");
    assert.equal(ready?.observedGeneration, 1);
    assert.equal(owner?.status?.keys, 1);
    assert.equal(owner?.status?.observedGeneration, 1);
    assert.deepEqual(
      events.map((e) => e.reason),
      ["ConfigMapApplied"],
    );
  });

  it("writes no status and records no Event when the status already says it all", async () => {
    const first = await reconcileOnce(__KIND__Reconciler, request, {
      objects: [__SINGULAR__({ data: { greeting: "hello" } })],
      resources: [__HANDLE__],
    });
    // The same fake again: the second reconcile sees what the first one left.
    const again = await reconcileOnce(__KIND__Reconciler, request, { client: first.client });
    assert.equal(again.error, undefined);
    // The ConfigMap's apply changes nothing, so the fake stores nothing, as the server would.
    assert.deepEqual(again.writes, []);
    assert.deepEqual(again.events, []);
  });

  it("leaves a paused __KIND__ alone, and does nothing for one that is gone", async () => {
    const paused = await reconcileOnce(__KIND__Reconciler, request, {
      objects: [__SINGULAR__({ data: { greeting: "hello" }, paused: true })],
      resources: [__HANDLE__],
    });
    assert.deepEqual(paused.writes, []);
    const gone = await reconcileOnce(__KIND__Reconciler, request, { resources: [__HANDLE__] });
    assert.equal(gone.error, undefined);
    assert.deepEqual(gone.writes, []);
  });

  it("surfaces a conflict on the status write, so the controller retries, and the retry reports Ready", async () => {
    const client = new FakeClient({
      resources: [__HANDLE__],
      objects: [__SINGULAR__({ data: { greeting: "hello" } })],
    });
    // The next status write fails as it does when another writer got there first.
    const conflict = client.intercept({ verb: "applyStatus", resource: __HANDLE__, times: 1 }, (call) => {
      throw serverErrors.conflict(call.context, __HANDLE__, call.name ?? "");
    });

    const failed = await reconcileOnce(__KIND__Reconciler, request, { client });
    assert.equal(conflict.calls, 1);
    assert.ok(isConflict(failed.error), `a ConflictError, got ${String(failed.error)}`);
    assert.deepEqual(
      failed.writes.map((w) => w.verb),
      ["apply"],
    );
    assert.deepEqual(failed.events, []);
    assert.equal(failed.conditions, undefined);

    // What the controller does with the error: reconcile again (after a backoff).
    const retried = await reconcileOnce(__KIND__Reconciler, request, { client, attempt: 2 });
    assert.equal(retried.error, undefined);
    assert.equal(retried.conditions?.find((c) => c.type === "Ready")?.status, "True");
    assert.deepEqual(
      retried.events.map((e) => e.reason),
      ["ConfigMapApplied"],
    );
  });
});

// The controller as the manager runs it (its queue, predicates, the owns
// mapping, the caches), on the FakeClient's watch and a fake clock:
// env.settle() runs every reconcile a change causes, with no waits.
describe("__KIND__Reconciler, in the test manager", function () {
  it("keeps the ConfigMap in step with spec.data through a create and a change", async () => {
    const env = await testManager({
      register: [__KIND__Reconciler],
      resources: [__HANDLE__],
      objects: [__SINGULAR__({ data: { greeting: "hello" } })],
    });
    try {
      await env.settle();
      assert.deepEqual(env.client.peek(ConfigMaps, request)?.data, { greeting: "hello" });

      const live = env.client.peek(__HANDLE__, request)!;
      await env.client.update(__HANDLE__, {
        ...live,
        spec: { ...live.spec, data: { greeting: "hi", lang: "en" } },
      });
      await env.settle();
      assert.deepEqual(env.client.peek(ConfigMaps, request)?.data, { greeting: "hi", lang: "en" });
      const status = env.client.peek(__HANDLE__, request)?.status;
      assert.equal(status?.keys, 2);
      assert.equal(status?.observedGeneration, 2);
      assert.ok(env.reconciles.every((r) => r.error === undefined));
    } finally {
      await env.stop();
    }
  });

  it("puts the ConfigMap back when another writer changes it (its change reconciles the owner)", async () => {
    const env = await testManager({
      register: [__KIND__Reconciler],
      resources: [__HANDLE__],
      objects: [__SINGULAR__({ data: { greeting: "hello" } })],
    });
    try {
      await env.settle();
      const cm = env.client.peek(ConfigMaps, request)!;
      await env.client.update(ConfigMaps, { ...cm, data: { greeting: "tampered" } });
      await env.settle();
      assert.deepEqual(env.client.peek(ConfigMaps, request)?.data, { greeting: "hello" });
    } finally {
      await env.stop();
    }
  });
});
