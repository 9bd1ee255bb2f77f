// The shardSelector probe against the real apiserver, with the gate on and
// off, for a built-in kind (the server echoes shardInfo) and a custom
// resource (v1.37 filters it but echoes nothing).
import { strict as assert } from "node:assert";
import { KubeListerWatcher } from "@tessera/reflector";
import { ConfigMaps, defineResource, type KubeObject } from "@tessera/client";
import { simpleCrd, useControlPlane, type ControlPlane } from "@tessera/testenv";
import { probeServerFiltering } from "../../src/index.js";

const Gadgets = defineResource<KubeObject>({
  group: "probe.example.com",
  version: "v1",
  kind: "Gadget",
  plural: "gadgets",
  scope: "Namespaced",
});
async function createGadgets(cp: ControlPlane, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const res = await cp.raw("/apis/probe.example.com/v1/namespaces/default/gadgets", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        apiVersion: "probe.example.com/v1",
        kind: "Gadget",
        metadata: { name: `g${i}` },
      }),
    });
    assert.equal(res.status, 201, res.body);
  }
}

for (const gate of [true, false]) {
  describe(`probeServerFiltering against the real apiserver, ShardedListAndWatch=${gate}`, function () {
    const env = useControlPlane({
      featureGates: { ShardedListAndWatch: gate },
      crds: [simpleCrd({ group: "probe.example.com", kind: "Gadget" })],
    });

    it("tells from the echo for a built-in kind", async () => {
      const probe = await probeServerFiltering(
        new KubeListerWatcher(env.cp.kubeConfig, ConfigMaps),
        "object.metadata.uid",
      );
      assert.equal(probe.filters, gate);
      assert.equal(probe.evidence, gate ? "echo" : "pages");
    });

    it("cannot tell for an empty custom resource collection, and tells from the pages once it has objects", async () => {
      const lw = new KubeListerWatcher(env.cp.kubeConfig, Gadgets);
      const empty = await probeServerFiltering(lw, "object.metadata.uid");
      assert.equal(empty.filters, undefined);
      assert.equal(empty.evidence, "no-objects");
      await createGadgets(env.cp, 20);
      const probe = await probeServerFiltering(lw, "object.metadata.uid");
      assert.equal(probe.filters, gate);
      assert.equal(probe.evidence, "pages", "custom resources are filtered without a shardInfo echo");
    });
  });
}
