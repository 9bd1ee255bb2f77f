import { strict as assert } from "node:assert";
import type { KubeObject } from "@tessera/client";
import {
  and,
  annotationsChanged,
  generationChanged,
  labelsChanged,
  not,
  or,
  predicate,
  resourceVersionChanged,
  specOrMetadataChanged,
  admits,
  type Predicate,
} from "../src/predicates.js";

function obj(meta: Record<string, unknown>): KubeObject {
  return { metadata: { name: "a", namespace: "ns", ...meta } };
}
const update = (p: Predicate, a: KubeObject, b: KubeObject) =>
  admits(p, { type: "update", oldObject: a, newObject: b });

describe("predicates", () => {
  it("generationChanged passes spec changes only, and every create and delete", () => {
    const p = generationChanged();
    assert.equal(update(p, obj({ generation: 1 }), obj({ generation: 2 })), true);
    assert.equal(
      update(p, obj({ generation: 2, resourceVersion: "1" }), obj({ generation: 2, resourceVersion: "2" })),
      false,
    );
    assert.equal(admits(p, { type: "create", object: obj({}) }), true);
    assert.equal(admits(p, { type: "delete", object: obj({}) }), true);
  });

  it("specOrMetadataChanged drops status-only updates and keeps metadata changes and kinds without a generation", () => {
    const p = specOrMetadataChanged();
    const base = { generation: 2, labels: { a: "1" }, finalizers: ["f"] };
    assert.equal(
      update(p, obj({ ...base, resourceVersion: "1" }), obj({ ...base, resourceVersion: "2" })),
      false,
    );
    assert.equal(update(p, obj(base), obj({ ...base, generation: 3 })), true, "spec");
    assert.equal(update(p, obj(base), obj({ ...base, labels: { a: "2" } })), true, "labels");
    assert.equal(update(p, obj(base), obj({ ...base, annotations: { n: "x" } })), true, "annotations");
    assert.equal(update(p, obj(base), obj({ ...base, finalizers: [] })), true, "finalizers");
    assert.equal(
      update(p, obj(base), obj({ ...base, deletionTimestamp: "2026-01-01T00:00:00Z" })),
      true,
      "deletion",
    );
    assert.equal(
      update(
        p,
        obj(base),
        obj({ ...base, ownerReferences: [{ apiVersion: "v1", kind: "K", name: "o", uid: "u" }] }),
      ),
      true,
      "owner references",
    );
    assert.equal(
      update(p, obj({ resourceVersion: "1" }), obj({ resourceVersion: "2" })),
      true,
      "no generation",
    );
  });

  it("labelsChanged and annotationsChanged compare the maps, not their identity", () => {
    assert.equal(update(labelsChanged(), obj({ labels: { a: "1" } }), obj({ labels: { a: "1" } })), false);
    assert.equal(update(labelsChanged(), obj({ labels: { a: "1" } }), obj({ labels: { a: "2" } })), true);
    assert.equal(update(labelsChanged(), obj({}), obj({ labels: { a: "1" } })), true);
    assert.equal(update(annotationsChanged(), obj({ annotations: { x: "1" } }), obj({})), true);
    assert.equal(update(annotationsChanged(), obj({}), obj({ annotations: {} })), false);
  });

  it("resourceVersionChanged filters resyncs", () => {
    assert.equal(
      update(resourceVersionChanged(), obj({ resourceVersion: "5" }), obj({ resourceVersion: "5" })),
      false,
    );
    assert.equal(
      update(resourceVersionChanged(), obj({ resourceVersion: "5" }), obj({ resourceVersion: "6" })),
      true,
    );
  });

  it("combine with and, or, not, and custom predicates", () => {
    const labelled = predicate("labelled", (o) => o.metadata?.labels?.["app"] !== undefined);
    const gen = generationChanged();
    const a = obj({ generation: 1, labels: { app: "x" } });
    const b = obj({ generation: 2, labels: { app: "x" } });
    const c = obj({ generation: 2 });
    assert.equal(update(and(gen, labelled), a, b), true);
    assert.equal(update(and(gen, labelled), a, c), false);
    assert.equal(update(or(labelsChanged(), labelled), b, b), true);
    assert.equal(update(not(gen), b, b), true);
    assert.equal(admits(not(labelled), { type: "create", object: c }), true);
    assert.match(and(gen, labelled).name, /and\(generationChanged, labelled\)/);
  });
});
