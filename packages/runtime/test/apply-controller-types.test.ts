// Compile-time checks of client.apply(..., { controller }): this file does
// not build if they fail. The apply configuration is a fresh object literal
// checked against the handle's type, so a misspelled field is an error, which
// wrapping the literal in setControllerReference() used to hide.
import { strict as assert } from "node:assert";
import { ConfigMaps, type Client, type KubeObject } from "../src/index.js";

export async function applyOwned(client: Client, owner: KubeObject): Promise<void> {
  await client.apply(
    ConfigMaps,
    { metadata: { name: "a", namespace: "default" }, data: { k: "v" } },
    { controller: owner, force: true },
  );
  await client.apply(
    ConfigMaps,
    {
      metadata: { name: "a", namespace: "default" },
      // @ts-expect-error `dta` is not a field of a ConfigMap
      dta: { k: "v" },
    },
    { controller: owner },
  );
  // @ts-expect-error `controler` is not an apply option
  await client.apply(ConfigMaps, { metadata: { name: "a" } }, { controler: owner });
}

describe("client.apply with a controller (types)", () => {
  it("compiles only with the ConfigMap's own fields (checked by tsc when this file builds)", () => {
    assert.equal(typeof applyOwned, "function");
  });
});
