// The manager's writes label the children of a sharded kind with their
// owner's slot (OwnerSlotLabels over ShardedKinds), checked on the FakeClient.
import { strict as assert } from "node:assert";
import { silentLogger } from "@tessera/core";
import { ConfigMaps, type KubeObject } from "@tessera/client";
import { OWNER_SLOT_LABEL, ownerSlotLabelValue } from "@tessera/sharding";
import { SlotSpace } from "@tessera/sharding/ranges";
import { SharedIndexInformer } from "@tessera/informers";
import { FakeClient } from "../src/testing.js";
import { OwnerSlotLabels } from "../src/client/owner-slot-labels.js";
import { ShardedKinds } from "../src/manager/sharded-kinds.js";
import { Widgets } from "./integration/widget.js";

describe("OwnerSlotLabels", () => {
  const space = new SlotSpace(64);
  const owner: KubeObject = {
    apiVersion: Widgets.apiVersion,
    kind: Widgets.kind,
    metadata: { name: "w", namespace: "ns", uid: "0b7a0d5e-7a53-4f43-9d3a-2f0c1a1f0e11" },
  };
  const slot = ownerSlotLabelValue(owner.metadata!.uid!, space);
  const ref = (controller: boolean, kind = Widgets.kind) => ({
    apiVersion: Widgets.apiVersion,
    kind,
    name: "w",
    uid: owner.metadata!.uid!,
    ...(controller ? { controller: true } : {}),
  });
  let fake: FakeClient;
  let client: OwnerSlotLabels;
  beforeEach(() => {
    fake = new FakeClient();
    const sharded = new ShardedKinds(silentLogger);
    const informer = new SharedIndexInformer<KubeObject>({
      listerWatcher: {
        resource: "widgets.example.com",
        list: () => Promise.reject(new Error("unused")),
        watch: () => Promise.resolve(),
      },
    });
    sharded.add(Widgets, "widget", informer, [], space);
    client = new OwnerSlotLabels(fake, sharded);
  });
  const labelOf = async (name: string) =>
    (await fake.get(ConfigMaps, { namespace: "ns", name }))?.metadata?.labels?.[OWNER_SLOT_LABEL];

  it("labels a child created, updated or applied with a controller reference to the sharded kind", async () => {
    await client.create(ConfigMaps, {
      metadata: { name: "a", namespace: "ns", ownerReferences: [ref(true)] },
    });
    assert.equal(await labelOf("a"), slot);
    const a = (await fake.get(ConfigMaps, { namespace: "ns", name: "a" }))!;
    // A label edited by hand is put back by the next write.
    await fake.update(ConfigMaps, {
      ...a,
      metadata: { ...a.metadata, labels: { [OWNER_SLOT_LABEL]: "99" } },
    });
    const edited = (await fake.get(ConfigMaps, { namespace: "ns", name: "a" }))!;
    await client.update(ConfigMaps, { ...edited, data: { x: "1" } });
    assert.equal(await labelOf("a"), slot);
    await client.apply(
      ConfigMaps,
      { metadata: { name: "b", namespace: "ns" }, data: { y: "2" } },
      { controller: owner },
    );
    assert.equal(await labelOf("b"), slot);
    await client.create(ConfigMaps, { metadata: { name: "c", namespace: "ns" } });
    await client.patch(
      ConfigMaps,
      { namespace: "ns", name: "c" },
      { type: "merge", patch: { metadata: { ownerReferences: [ref(true)] } } },
    );
    assert.equal(await labelOf("c"), slot);
  });

  it("leaves alone children of other kinds, non-controller owners, and JSON patches", async () => {
    await client.create(ConfigMaps, {
      metadata: { name: "d", namespace: "ns", ownerReferences: [ref(false)] },
    });
    await client.create(ConfigMaps, {
      metadata: { name: "e", namespace: "ns", ownerReferences: [ref(true, "Gadget")] },
    });
    await client.create(ConfigMaps, { metadata: { name: "f", namespace: "ns", labels: { keep: "me" } } });
    await client.patch(
      ConfigMaps,
      { namespace: "ns", name: "f" },
      { type: "json", patch: [{ op: "add", path: "/data", value: { z: "3" } }] },
    );
    for (const name of ["d", "e", "f"]) assert.equal(await labelOf(name), undefined, name);
  });
});
