import { strict as assert } from "node:assert";
import fc from "fast-check";
import type { KubeObject } from "@tessera/client";
import {
  controllerOf,
  OwnerReferenceError,
  removeOwnerReference,
  setControllerReference,
  setOwnerReference,
} from "../src/index.js";

const widget = (name: string, namespace: string | undefined = "ns"): KubeObject => ({
  apiVersion: "example.com/v1",
  kind: "Widget",
  metadata: { name, ...(namespace ? { namespace } : {}), uid: `uid-${name}` },
});
const configMap = (namespace = "ns"): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "cm", namespace },
});

describe("owner references", () => {
  it("setControllerReference adds a blocking controller reference, idempotently, without changing its input", () => {
    const cm = configMap();
    const owned = setControllerReference<KubeObject>(widget("a"), cm);
    assert.equal(cm.metadata?.["ownerReferences" as keyof typeof cm.metadata], undefined);
    assert.deepEqual(controllerOf(owned), {
      apiVersion: "example.com/v1",
      kind: "Widget",
      name: "a",
      uid: "uid-a",
      controller: true,
      blockOwnerDeletion: true,
    });
    const again = setControllerReference<KubeObject>(widget("a"), owned);
    assert.equal((again.metadata as { ownerReferences: unknown[] }).ownerReferences.length, 1);
  });

  it("refuses a second controller, a cross-namespace owner, and a namespaced owner of a cluster-scoped object", () => {
    const owned = setControllerReference<KubeObject>(widget("a"), configMap());
    assert.throws(
      () => setControllerReference<KubeObject>(widget("b"), owned),
      (e: unknown) =>
        e instanceof OwnerReferenceError &&
        /ConfigMap ns\/cm is already controlled by Widget a; it cannot also be controlled by Widget ns\/b/.test(
          e.message,
        ),
    );
    assert.throws(
      () => setControllerReference<KubeObject>(widget("a", "other"), configMap()),
      /cannot cross namespaces/,
    );
    const clusterScoped: KubeObject = { apiVersion: "v1", kind: "Namespace", metadata: { name: "n" } };
    assert.throws(
      () => setControllerReference<KubeObject>(widget("a"), clusterScoped),
      /a cluster-scoped object cannot have a namespaced owner/,
    );
    assert.throws(
      () => setControllerReference<KubeObject>({ kind: "Widget", metadata: { name: "x" } }, configMap()),
      /needs apiVersion, kind, metadata.name and metadata.uid/,
    );
    // A cluster-scoped owner may own a namespaced object.
    assert.ok(controllerOf(setControllerReference<KubeObject>(widget("c", undefined), configMap())));
  });

  it("setOwnerReference adds a plain owner; removeOwnerReference releases it", () => {
    const owned = setOwnerReference<KubeObject>(
      widget("b"),
      setControllerReference<KubeObject>(widget("a"), configMap()),
    );
    assert.equal((owned.metadata as { ownerReferences: unknown[] }).ownerReferences.length, 2);
    assert.equal(controllerOf(owned)?.name, "a");
    const released = removeOwnerReference(widget("a"), owned);
    assert.equal(controllerOf(released), undefined);
    assert.equal((released.metadata as { ownerReferences: unknown[] }).ownerReferences.length, 1);
  });

  it("property: whatever sequence of set and remove, never two controllers", () => {
    const step = fc.record({
      op: fc.constantFrom("controller", "owner", "remove"),
      owner: fc.constantFrom("a", "b", "c"),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
        let object = configMap();
        for (const { op, owner } of steps) {
          try {
            if (op === "controller") object = setControllerReference<KubeObject>(widget(owner), object);
            else if (op === "owner") object = setOwnerReference<KubeObject>(widget(owner), object);
            else object = removeOwnerReference(widget(owner), object);
          } catch (error) {
            assert.ok(error instanceof OwnerReferenceError);
          }
          const refs =
            (object.metadata as { ownerReferences?: Array<{ controller?: boolean; name: string }> })
              .ownerReferences ?? [];
          assert.ok(refs.filter((r) => r.controller).length <= 1);
          assert.equal(new Set(refs.map((r) => r.name)).size, refs.length);
        }
      }),
    );
  });
});
