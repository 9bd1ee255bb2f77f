// The shardSelector probe against the real apiserver, with the gate on and
// off, for a built-in kind (the server echoes shardInfo) and a custom
// resource (v1.37 filters it but echoes nothing).
import { strict as assert } from "node:assert";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigMaps, defineResource, KubeListerWatcher, type KubeObject } from "@tessera/reflector";
import { useControlPlane, type ControlPlane } from "@tessera/testenv";
import { probeServerFiltering } from "../../src/index.js";

const Gadgets = defineResource<KubeObject>({
  group: "probe.example.com",
  version: "v1",
  kind: "Gadget",
  plural: "gadgets",
  scope: "Namespaced",
});
const crd = join(mkdtempSync(join(tmpdir(), "tessera-probe-")), "gadgets.json");
writeFileSync(
  crd,
  JSON.stringify({
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "gadgets.probe.example.com" },
    spec: {
      group: "probe.example.com",
      names: { kind: "Gadget", plural: "gadgets", singular: "gadget", listKind: "GadgetList" },
      scope: "Namespaced",
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
        },
      ],
    },
  }),
);

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
    const env = useControlPlane({ featureGates: { ShardedListAndWatch: gate }, crds: [crd] });

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
