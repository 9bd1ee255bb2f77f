import { strict as assert } from "node:assert";
import type { V1ConfigMap } from "@kubernetes/client-node";
import { useControlPlane } from "@tessera/testenv";
import { SlotSpace, withShardSelector } from "../../src/ranges.js";

interface ListBody {
  metadata: { shardInfo?: { selector?: string } };
  items: V1ConfigMap[];
}

describe("with ShardedListAndWatch off, the client-side hash still gives the partition", function () {
  this.timeout(120_000);
  const env = useControlPlane({ featureGates: { ShardedListAndWatch: false } });

  it("the server ignores shardSelector and sends no shardInfo; matchesObject splits the full list", async () => {
    const post = async (path: string, body: object) => {
      const res = await env.cp.raw(path, {
        method: "POST",
        body: JSON.stringify(body),
        headers: { "content-type": "application/json" },
      });
      assert.equal(res.status, 201, res.body);
    };
    await post("/api/v1/namespaces", { metadata: { name: "off" } });
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let i = w; i < 400; i += 8)
          await post("/api/v1/namespaces/off/configmaps", { metadata: { name: `cm-${i}` } });
      }),
    );
    const space = new SlotSpace(4);
    const names = new Set<string>();
    for (let slot = 0; slot < 4; slot++) {
      const selector = space.selectorFor("object.metadata.uid", [slot]);
      const res = await env.cp.raw(withShardSelector("/api/v1/namespaces/off/configmaps", selector));
      assert.equal(res.status, 200, res.body.slice(0, 300));
      const body = JSON.parse(res.body) as ListBody;
      assert.equal(body.metadata.shardInfo, undefined, "no shardInfo: the server did not filter");
      assert.equal(body.items.length, 400, "the whole collection comes back");
      for (const cm of body.items.filter((c) => selector.matchesObject(c))) {
        assert.ok(!names.has(cm.metadata!.name!), `${cm.metadata!.name} in two shards`);
        names.add(cm.metadata!.name!);
      }
    }
    assert.equal(names.size, 400, "client-side filtering puts every object in exactly one shard");
  });
});
