import { strict as assert } from "node:assert";
import { UNLABELLED_NAMESPACE_LIMIT, unlabelledLookNamespaces } from "../src/index.js";

describe("where a member looks for unlabelled owned objects", () => {
  const namespaced = { ownerScope: "Namespaced", ownedScope: "Namespaced" } as const;

  it("lists only the namespaces its namespaced owners are in, each once, in order", () => {
    assert.deepEqual(
      unlabelledLookNamespaces({ ...namespaced, ownerNamespaces: ["b", "a", "b", undefined, ""] }),
      ["a", "b"],
    );
    // No owner cached: no child of ours can exist yet, nothing is listed.
    assert.deepEqual(unlabelledLookNamespaces({ ...namespaced, ownerNamespaces: [] }), []);
  });

  it("keeps within the owned cache's namespace", () => {
    assert.deepEqual(
      unlabelledLookNamespaces({ ...namespaced, cacheNamespace: "a", ownerNamespaces: ["a", "b"] }),
      ["a"],
    );
    assert.deepEqual(
      unlabelledLookNamespaces({ ...namespaced, cacheNamespace: "c", ownerNamespaces: ["a", "b"] }),
      [],
    );
    // "" is all namespaces, as in the informers' options.
    assert.deepEqual(
      unlabelledLookNamespaces({ ...namespaced, cacheNamespace: "", ownerNamespaces: ["a"] }),
      ["a"],
    );
  });

  it("lists all namespaces at once past the limit of namespaces", () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => `ns-${i}`);
    assert.equal(
      unlabelledLookNamespaces({ ...namespaced, ownerNamespaces: many(UNLABELLED_NAMESPACE_LIMIT) }).length,
      UNLABELLED_NAMESPACE_LIMIT,
    );
    assert.deepEqual(
      unlabelledLookNamespaces({ ...namespaced, ownerNamespaces: many(UNLABELLED_NAMESPACE_LIMIT + 1) }),
      [undefined],
    );
    assert.deepEqual(unlabelledLookNamespaces({ ...namespaced, ownerNamespaces: many(3), limit: 2 }), [
      undefined,
    ]);
  });

  it("lists all namespaces (or the cache's) for a cluster-scoped owner, whose children may be anywhere", () => {
    const owner = { ownerScope: "Cluster", ownedScope: "Namespaced" } as const;
    assert.deepEqual(unlabelledLookNamespaces({ ...owner, ownerNamespaces: [undefined] }), [undefined]);
    assert.deepEqual(unlabelledLookNamespaces({ ...owner, cacheNamespace: "a", ownerNamespaces: [] }), ["a"]);
  });

  it("lists a cluster-scoped owned kind whole for a cluster-scoped owner, and not at all for a namespaced one", () => {
    assert.deepEqual(
      unlabelledLookNamespaces({ ownerScope: "Cluster", ownedScope: "Cluster", ownerNamespaces: [] }),
      [undefined],
    );
    assert.deepEqual(
      unlabelledLookNamespaces({ ownerScope: "Namespaced", ownedScope: "Cluster", ownerNamespaces: ["a"] }),
      [],
    );
  });
});
