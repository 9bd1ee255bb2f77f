import { strict as assert } from "node:assert";
import { unknownCacheKinds } from "../src/manager/unknown-cache-kinds.js";

describe("unknownCacheKinds", () => {
  it("names each cache.byKind key no controller caches, and the declared kinds", () => {
    const warning = unknownCacheKinds(
      ["configmaps", "deployments", "secret"],
      ["deployments.apps", "configmaps", "widgets.example.com"],
    );
    assert.ok(warning);
    assert.deepEqual(warning.fields, {
      keys: ["deployments", "secret"],
      declared: ["configmaps", "deployments.apps", "widgets.example.com"],
    });
    assert.match(
      warning.message,
      /cache\.byKind keys "deployments", "secret" name no kind a controller caches/,
    );
    assert.match(
      warning.message,
      /the declared kinds are configmaps, deployments\.apps, widgets\.example\.com/,
    );
  });

  it("says nothing when every key names a declared kind, or there are none", () => {
    assert.equal(unknownCacheKinds(["configmaps"], ["configmaps", "secrets"]), undefined);
    assert.equal(unknownCacheKinds([], ["configmaps"]), undefined);
  });

  it("words one key in the singular, and no declared kinds as none", () => {
    const warning = unknownCacheKinds(["pods"], []);
    assert.match(
      warning?.message ?? "",
      /key "pods" names no kind .* so it changes nothing: the declared kinds are none/,
    );
  });
});
