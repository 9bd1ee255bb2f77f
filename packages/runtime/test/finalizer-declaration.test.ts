// The declaration of a managed finalizer and of the backoff cap: what the
// builder accepts, and the errors a mismatch of finalizer() and cleanup gives.
import { strict as assert } from "node:assert";
import { KubeConfig } from "@kubernetes/client-node";
import { silentLogger } from "@tessera/core";
import { defineResource, type KubeObject } from "@tessera/client";
import { BuilderError, ControllerBuilder } from "../src/codegen.js";
import { CleanupResult, ErrorResult, Manager, type ControllerBuilder as Builder } from "../src/index.js";
import { addFinalizerPatch, removeFinalizerPatch } from "../src/controller.js";

const Widgets = defineResource<KubeObject>({
  group: "example.com",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  scope: "Namespaced",
});

const problemsOf = (build: () => unknown): readonly string[] => {
  try {
    build();
  } catch (error) {
    assert.ok(error instanceof BuilderError, String(error));
    return error.problems;
  }
  assert.fail("expected a BuilderError");
};

/** A cluster never contacted: the declarations fail before anything is started. */
function unusedCluster(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: "unused", server: "https://127.0.0.1:9" }],
    users: [{ name: "unused", token: "unused" }],
    contexts: [{ name: "unused", cluster: "unused", user: "unused" }],
    currentContext: "unused",
  });
  return kubeConfig;
}

const newManager = () =>
  Manager.create({
    kubeConfig: unusedCluster(),
    env: {},
    logger: silentLogger,
    config: { name: "finalizer-test", healthBindAddress: "0", metricsBindAddress: "0" },
  });

describe("finalizer(name), cleanup and maxBackoffMs in a declaration", () => {
  it("records a domain-qualified finalizer and refuses the names the API server would", () => {
    assert.equal(
      new ControllerBuilder().for(Widgets).finalizer("example.com/cleanup").build().finalizer,
      "example.com/cleanup",
    );
    assert.equal(new ControllerBuilder().for(Widgets).build().finalizer, undefined);
    assert.match(
      problemsOf(() => new ControllerBuilder().for(Widgets).finalizer("cleanup").build())[0]!,
      /needs a domain prefix, e\.g\. finalizer\("example\.com\/cleanup"\)/,
    );
    assert.match(
      problemsOf(() => new ControllerBuilder().for(Widgets).finalizer("Example.com/x").build())[0]!,
      /prefix part must be a DNS-1123 subdomain/,
    );
    assert.match(
      problemsOf(() => new ControllerBuilder().for(Widgets).finalizer("example.com/-x").build())[0]!,
      /name part must consist of alphanumeric/,
    );
    assert.match(
      problemsOf(() =>
        new ControllerBuilder().for(Widgets).finalizer("a.com/x").finalizer("b.com/y").build(),
      )[0]!,
      /a controller manages one finalizer/,
    );
  });

  it("takes maxBackoffMs as a positive number, and not beside a rate limiter of one's own", () => {
    assert.equal(
      new ControllerBuilder().for(Widgets).withOptions({ maxBackoffMs: 30_000 }).build().options.maxBackoffMs,
      30_000,
    );
    assert.match(
      problemsOf(() => new ControllerBuilder().for(Widgets).withOptions({ maxBackoffMs: 0 }).build())[0]!,
      /maxBackoffMs must be a positive number of ms, got 0/,
    );
    const rateLimiter = { when: () => 1, forget: () => {}, numRequeues: () => 0 };
    assert.match(
      problemsOf(() =>
        new ControllerBuilder().for(Widgets).withOptions({ maxBackoffMs: 1_000, rateLimiter }).build(),
      )[0]!,
      /with a rateLimiter of your own, set the cap in it/,
    );
  });

  it("refuses finalizer() without cleanup, and cleanup without finalizer(), when completed", async () => {
    const manager = await newManager();
    assert.throws(
      () =>
        manager
          .controller()
          .for(Widgets)
          .finalizer("example.com/cleanup")
          .complete(() => undefined),
      /finalizer\("example\.com\/cleanup"\) is declared but the reconciler has no cleanup\(object, ctx\) method/,
    );
    assert.throws(
      () =>
        manager
          .controller()
          .for(Widgets)
          .complete({ reconcile: () => undefined, cleanup: () => CleanupResult.done }),
      /has a cleanup\(\) method but the controller declares no finalizer/,
    );
  });

  it("refuses a registered class whose declaration and methods do not match, before anything starts", async () => {
    class Forgetful {
      controller(on: Builder) {
        return on.for(Widgets).finalizer("example.com/cleanup");
      }
      reconcile() {}
    }
    const manager = await newManager();
    manager.register(Forgetful);
    await assert.rejects(manager.run(new AbortController().signal), (error: unknown) => {
      assert.ok(error instanceof BuilderError, String(error));
      assert.match(error.message, /widget \(Forgetful\)/);
      assert.match(error.message, /no cleanup\(object, ctx\) method/);
      return true;
    });
  });

  it("builds the JSON patches: a test of the whole list before an add, of the entry before a remove", () => {
    assert.deepEqual(addFinalizerPatch(undefined, "example.com/x"), [
      { op: "test", path: "/metadata/finalizers", value: null },
      { op: "add", path: "/metadata/finalizers", value: ["example.com/x"] },
    ]);
    assert.deepEqual(addFinalizerPatch(["other.io/y"], "example.com/x"), [
      { op: "test", path: "/metadata/finalizers", value: ["other.io/y"] },
      { op: "add", path: "/metadata/finalizers/-", value: "example.com/x" },
    ]);
    assert.deepEqual(removeFinalizerPatch(1, "example.com/x"), [
      { op: "test", path: "/metadata/finalizers/1", value: "example.com/x" },
      { op: "remove", path: "/metadata/finalizers/1" },
    ]);
  });

  it("makes its results with checks: keep takes a non-negative delay, requeueAfter a positive one", () => {
    assert.deepEqual(CleanupResult.keep({ requeueAfterMs: 5_000 }), { type: "keep", requeueAfterMs: 5_000 });
    assert.deepEqual(CleanupResult.keep(), { type: "keep", requeueAfterMs: undefined });
    assert.throws(() => CleanupResult.keep({ requeueAfterMs: -1 }), /non-negative number of ms, got -1/);
    assert.deepEqual(ErrorResult.requeueAfter(100), { type: "requeue", requeueAfterMs: 100 });
    assert.throws(() => ErrorResult.requeueAfter(0), /positive number of ms, got 0/);
  });
});
