import { strict as assert } from "node:assert";
import { KubeConfig } from "@kubernetes/client-node";
import { shareConnections } from "../src/connection-sharing.js";

describe("shareConnections", () => {
  it("keeps the clusters, users and context, and wraps only once", () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "c", server: "https://127.0.0.1:6443", caData: "" }],
      users: [{ name: "u", token: "t" }],
      contexts: [{ name: "x", cluster: "c", user: "u" }],
      currentContext: "x",
    });
    const shared = shareConnections(kc);
    assert.notEqual(shared, kc);
    assert.equal(shared.getCurrentCluster()?.server, "https://127.0.0.1:6443");
    assert.equal(shared.getCurrentUser()?.token, "t");
    assert.equal(shareConnections(shared), shared);
  });
});
