import { strict as assert } from "node:assert";
import { CliError, devReplicas } from "../src/index.js";

describe("tessera dev --replicas: each replica's identity and ports", () => {
  it("one replica keeps the identity given and the runtime's default ports", () => {
    assert.deepEqual(devReplicas(1, "dev"), [
      { identity: "dev", env: { TESSERA_IDENTITY: "dev" }, prefix: "" },
    ]);
  });

  it("several get numbered identities, two ports each that no other replica takes, and aligned prefixes", () => {
    const replicas = devReplicas(12, "dev");
    assert.deepEqual(
      replicas.map((r) => r.identity),
      Array.from({ length: 12 }, (_, i) => `dev-${i}`),
    );
    assert.deepEqual(replicas[1]!.env, {
      TESSERA_IDENTITY: "dev-1",
      TESSERA_METRICS_BIND_ADDRESS: ":8082",
      TESSERA_HEALTH_BIND_ADDRESS: ":8083",
    });
    const ports = replicas.flatMap((r) => [
      r.env["TESSERA_METRICS_BIND_ADDRESS"],
      r.env["TESSERA_HEALTH_BIND_ADDRESS"],
    ]);
    assert.equal(new Set(ports).size, 24);
    assert.equal(replicas[0]!.prefix, "dev-0  | ");
    assert.equal(replicas[11]!.prefix, "dev-11 | ");
  });

  it("refuses a count that is not a whole number from 1 to 16", () => {
    for (const bad of [0, -1, 1.5, Number.NaN, 17]) {
      assert.throws(
        () => devReplicas(bad, "dev"),
        (e: Error) => e instanceof CliError && /--replicas/.test(e.message),
      );
    }
  });
});
