import { strict as assert } from "node:assert";
import fc from "fast-check";
import {
  expectedOwnerSlot,
  OWNER_SLOT_LABEL,
  OwnerSlotListerWatcher,
  ownerSlotLabelValue,
  ownerSlotSelector,
  slotsOfRange,
  unlabelledSelector,
} from "../src/index.js";
import { ShardSelector, SlotSpace } from "../src/ranges.js";

const slotCounts = fc.integer({ min: 0, max: 16 }).map((b) => 2 ** b);

describe("owner-slot label", () => {
  it("puts a child in the slot the ring's own hash puts its owner in, for any slot count", () => {
    fc.assert(
      fc.property(slotCounts, fc.uuid(), (S, uid) => {
        const space = new SlotSpace(S);
        const value = ownerSlotLabelValue(uid, space);
        assert.equal(value, String(space.slotOfKey(uid)));
        // The same slot as the primary's shardSelector puts the owner in.
        const selector = ShardSelector.of("object.metadata.uid", [space.rangeOf(Number(value))]);
        assert.ok(selector.matchesObject({ metadata: { uid } }));
      }),
    );
  });

  it("is a label value the server accepts, and the same on every call", () => {
    const space = new SlotSpace(65536);
    const uid = "9f4b7f1e-6a0c-4d36-9c44-2d7b9d5b1a63";
    const value = ownerSlotLabelValue(uid, space);
    assert.match(value, /^[0-9]{1,5}$/);
    assert.equal(ownerSlotLabelValue(uid, space), value);
  });

  it("labels only children whose controller owner is of the sharded kind", () => {
    const space = new SlotSpace(256);
    const owner = { group: "example.com", kind: "Widget" };
    const ref = (apiVersion: string, kind: string, controller: boolean) => ({
      metadata: { ownerReferences: [{ apiVersion, kind, name: "w", uid: "u-1", controller }] },
    });
    assert.equal(
      expectedOwnerSlot(ref("example.com/v1", "Widget", true), owner, space),
      ownerSlotLabelValue("u-1", space),
    );
    assert.equal(
      expectedOwnerSlot(ref("example.com/v2", "Widget", true), owner, space),
      ownerSlotLabelValue("u-1", space),
    );
    assert.equal(expectedOwnerSlot(ref("example.com/v1", "Widget", false), owner, space), undefined);
    assert.equal(expectedOwnerSlot(ref("other.com/v1", "Widget", true), owner, space), undefined);
    assert.equal(expectedOwnerSlot(ref("v1", "ConfigMap", true), owner, space), undefined);
    assert.equal(expectedOwnerSlot({ metadata: {} }, owner, space), undefined);
  });

  it("selects slot runs with a set-based selector after the cache's own", () => {
    const space = new SlotSpace(256);
    assert.deepEqual(slotsOfRange(space.rangesOf([3, 4, 5])[0]!, space), [3, 4, 5]);
    assert.deepEqual(slotsOfRange(space.rangeOf(255), space), [255]);
    assert.equal(ownerSlotSelector([3, 4, 5]), `${OWNER_SLOT_LABEL} in (3,4,5)`);
    assert.equal(ownerSlotSelector([7], "app=x"), `app=x,${OWNER_SLOT_LABEL} in (7)`);
    assert.equal(unlabelledSelector(), `!${OWNER_SLOT_LABEL}`);
    const sent: string[] = [];
    const lw = new OwnerSlotListerWatcher(
      {
        resource: "configmaps",
        list: (options) => {
          sent.push(options.labelSelector ?? "");
          return Promise.resolve({ metadata: { resourceVersion: "1" }, items: [] });
        },
        watch: () => Promise.resolve(),
      },
      [1, 2],
      "app=x",
    );
    void lw.list({});
    assert.deepEqual(sent, [`app=x,${OWNER_SLOT_LABEL} in (1,2)`]);
    assert.ok(lw.matchesObject({ metadata: { labels: { [OWNER_SLOT_LABEL]: "2" } } }));
    assert.ok(!lw.matchesObject({ metadata: { labels: { [OWNER_SLOT_LABEL]: "3" } } }));
    assert.ok(!lw.matchesObject({ metadata: {} }));
  });
});
