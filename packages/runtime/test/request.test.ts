import { strict as assert } from "node:assert";
import { requestFor, requestFromKey } from "../src/controller.js";
import { requestKey } from "../src/controller.js";
import { type Request } from "../src/index.js";

describe("Request", () => {
  it("derives the queue key from namespace and name", () => {
    assert.equal(requestKey({ namespace: "team-a", name: "w" }), "team-a/w");
    assert.equal(requestKey({ namespace: "", name: "node-1" }), "node-1", "cluster-scoped: the name alone");
  });

  it("is namespace and name only: a key cannot be supplied beside them", () => {
    const request: Request = requestFor(undefined, "n");
    assert.deepEqual(Object.keys(request).sort(), ["name", "namespace"]);
    // @ts-expect-error: the key is derived, not a field a mapping function may set
    const withKey: Request = { namespace: "a", name: "b", key: "c/d" };
    assert.equal(requestKey(withKey), "a/b", "a stray key field is ignored; the derived one wins");
  });

  it("round-trips a key", () => {
    for (const key of ["ns/name", "cluster-scoped"]) assert.equal(requestKey(requestFromKey(key)), key);
    assert.deepEqual(requestFromKey("ns/a/b"), { namespace: "ns", name: "a/b" });
  });
});
