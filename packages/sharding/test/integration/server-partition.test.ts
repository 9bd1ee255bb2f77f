import { strict as assert } from "node:assert";
import { CoreV1Api, type V1ConfigMap } from "@kubernetes/client-node";
import { useControlPlane } from "@tessera/testenv";
import {
  planSlots,
  ShardSelector,
  ShardSelectorError,
  SlotSpace,
  withShardSelector,
  type SlotOwners,
} from "../../src/ranges.js";

interface ListBody {
  metadata: { resourceVersion?: string; shardInfo?: { selector?: string } };
  items: V1ConfigMap[];
}

const OBJECTS = 10_000;
const NAMESPACE = "partition";

/** Runs `work(i)` for i in [0, count) with at most `concurrency` in flight. */
async function pool(count: number, concurrency: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await work(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

describe("server-side shard filtering agrees with the client-side hash (ShardedListAndWatch on)", function () {
  this.timeout(240_000);
  const env = useControlPlane();
  /** name -> uid of every ConfigMap created in NAMESPACE */
  const uids = new Map<string, string>();

  async function list(path: string): Promise<ListBody> {
    const res = await env.cp.raw(path);
    assert.equal(res.status, 200, `GET ${path}: ${res.status} ${res.body.slice(0, 300)}`);
    return JSON.parse(res.body) as ListBody;
  }

  before(async function () {
    // Raw POSTs over keep-alive connections: several times faster than the generated client here.
    const post = async (path: string, body: object) => {
      const res = await env.cp.raw(path, {
        method: "POST",
        body: JSON.stringify(body),
        headers: { "content-type": "application/json" },
      });
      assert.equal(res.status, 201, `POST ${path}: ${res.status} ${res.body.slice(0, 300)}`);
      return JSON.parse(res.body) as V1ConfigMap;
    };
    await post("/api/v1/namespaces", { metadata: { name: NAMESPACE } });
    await pool(OBJECTS, 64, async (i) => {
      const cm = await post(`/api/v1/namespaces/${NAMESPACE}/configmaps`, {
        metadata: { name: `cm-${i}` },
        data: { i: String(i) },
      });
      uids.set(cm.metadata!.name!, cm.metadata!.uid!);
    });
    assert.equal(uids.size, OBJECTS);
  });

  it(`partitions ${OBJECTS} ConfigMaps across 8 members' selectors exactly as the planner's slots do`, async () => {
    // Grow a ring of 256 slots from 1 to 8 members, so several selectors have more than one term.
    const space = new SlotSpace(256);
    const members = Array.from({ length: 8 }, (_, i) => `member-${i}`);
    let owners: SlotOwners = new Array<undefined>(256).fill(undefined);
    for (let n = 1; n <= 8; n++) owners = planSlots(owners, members.slice(0, n)).owners;
    const selectors = members.map((m) =>
      space.selectorFor(
        "object.metadata.uid",
        owners.flatMap((o, i) => (o === m ? [i] : [])),
      ),
    );
    assert.ok(
      selectors.some((s) => s.ranges.length > 1),
      "at least one selector has several terms",
    );

    const seen = new Map<string, string>(); // name -> member whose LIST returned it
    for (const [k, selector] of selectors.entries()) {
      const member = members[k]!;
      const body = await list(withShardSelector(`/api/v1/namespaces/${NAMESPACE}/configmaps`, selector));
      assert.equal(
        body.metadata.shardInfo?.selector,
        selector.toString(),
        "the server echoes our selector verbatim",
      );
      const expected = [...uids]
        .filter(([, uid]) => owners[space.slotOfKey(uid)] === member)
        .map(([name]) => name)
        .sort();
      const got = body.items.map((cm) => cm.metadata!.name!).sort();
      assert.deepEqual(got, expected, `${member}'s LIST differs from the client-side partition`);
      for (const cm of body.items) {
        assert.ok(selector.matchesObject(cm), `${cm.metadata!.name} returned but does not match client-side`);
        assert.equal(seen.get(cm.metadata!.name!), undefined, `${cm.metadata!.name} returned to two members`);
        seen.set(cm.metadata!.name!, member);
      }
    }
    assert.equal(seen.size, OBJECTS, "every object is returned to exactly one member");
    const counts = members.map((m) => [...seen.values()].filter((v) => v === m).length);
    // 32 slots of 256 each: an eighth of the objects, give or take random spread
    for (const c of counts)
      assert.ok(c > OBJECTS / 8 / 2 && c < (OBJECTS / 8) * 2, `counts ${counts.join(",")}`);
  });

  it("re-serializes a loosely spaced selector exactly as the client canonicalises it", async () => {
    const loose =
      " shardRange( object.metadata.uid ,'0x0000000000000000','0x4000000000000000' )||" +
      "shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000') ";
    const ours = ShardSelector.parse(loose);
    const body = await list(
      `/api/v1/namespaces/${NAMESPACE}/configmaps?shardSelector=${encodeURIComponent(loose)}`,
    );
    assert.equal(body.metadata.shardInfo?.selector, ours.toString());
    const expected = [...uids.values()].filter((uid) => ours.matchesKey(uid)).length;
    assert.equal(body.items.length, expected);
  });

  it("filters by namespace hash across namespaces", async () => {
    const core = env.cp.kubeConfig.makeApiClient(CoreV1Api);
    const namespaces = Array.from({ length: 24 }, (_, i) => `tenant-${i}`);
    await pool(namespaces.length, 8, async (i) => {
      await core.createNamespace({ body: { metadata: { name: namespaces[i]! } } });
      await core.createNamespacedConfigMap({
        namespace: namespaces[i]!,
        body: { metadata: { name: "cfg" } },
      });
    });
    const all = (await list("/api/v1/configmaps")).items.filter((cm) => cm.metadata?.name === "cfg");
    assert.equal(all.length, namespaces.length);
    const space = new SlotSpace(4);
    const got: string[] = [];
    for (let slot = 0; slot < 4; slot++) {
      const selector = space.selectorFor("object.metadata.namespace", [slot]);
      const body = await list(withShardSelector("/api/v1/configmaps", selector));
      assert.equal(body.metadata.shardInfo?.selector, selector.toString());
      for (const cm of body.items.filter((c) => c.metadata?.name === "cfg")) {
        assert.equal(space.slotOfKey(cm.metadata!.namespace!), slot);
        got.push(cm.metadata!.namespace!);
      }
    }
    assert.deepEqual(got.sort(), [...namespaces].sort());
  });

  it("refuses a malformed selector before sending it; the server would answer it with an error", async () => {
    const malformed = [
      "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')",
      "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000ABC')",
      "shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')",
      "shardRange(object.metadata.uid, '0x8000000000000000', '0x0000000000000000')",
      "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || " +
        "shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')",
    ];
    const path = `/api/v1/namespaces/${NAMESPACE}/configmaps`;
    for (const text of malformed) {
      assert.throws(() => withShardSelector(path, text), ShardSelectorError);
      // What would have happened had it been sent: the server refuses it too (HTTP 500 in 1.37).
      const res = await env.cp.raw(`${path}?limit=1&shardSelector=${encodeURIComponent(text)}`);
      assert.ok(res.status >= 400, `server accepted ${text}: ${res.status}`);
    }
  });
});
