import { strict as assert } from "node:assert";
import fc from "fast-check";
import { controllerOwnerOf, createDequeueGuard, secondaryShardKey } from "../src/index.js";
import { SlotSpace, type ShardKeySource } from "../src/ranges.js";

describe("createDequeueGuard", () => {
  const space = new SlotSpace(16);

  it("lets a key through only while its object's uid is in an owned slot", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.uuid(), { minLength: 1, maxLength: 30 }),
        fc.subarray([...Array(16).keys()]),
        (uids, mine) => {
          const cache = new Map<string, ShardKeySource>(
            uids.map((uid, i) => [`ns/obj-${i}`, { metadata: { uid } }]),
          );
          let owned = new Set(mine);
          const guard = createDequeueGuard({
            space,
            field: "object.metadata.uid",
            ownedSlots: () => owned,
            lookup: (k) => cache.get(k),
          });
          uids.forEach((uid, i) => assert.equal(guard(`ns/obj-${i}`), owned.has(space.slotOfKey(uid))));
          owned = new Set(); // the assignment changed: every slot released
          uids.forEach((_, i) => assert.equal(guard(`ns/obj-${i}`), false));
        },
      ),
    );
  });

  it("drops a key whose object is not cached, unless told to process it", () => {
    const all = new Set([...Array(16).keys()]);
    const lookup = () => undefined;
    assert.equal(
      createDequeueGuard({ space, field: "object.metadata.uid", ownedSlots: () => all, lookup })("a/b"),
      false,
    );
    assert.equal(
      createDequeueGuard({
        space,
        field: "object.metadata.uid",
        ownedSlots: () => all,
        lookup,
        whenUnknown: "process",
      })("a/b"),
      true,
    );
  });

  it("reads the namespace from the key under the namespace key, cluster-scoped keys hashing ''", () => {
    const owned = new Set([space.slotOfKey("team-a"), space.slotOfKey("")]);
    const guard = createDequeueGuard({ space, field: "object.metadata.namespace", ownedSlots: () => owned });
    assert.equal(guard("team-a/x"), true);
    assert.equal(guard("cluster-thing"), true);
    const other = ["team-b", "team-c", "team-d", "kube-system"].find(
      (ns) => !owned.has(space.slotOfKey(ns)),
    )!;
    assert.equal(guard(`${other}/x`), false);
  });

  it("refuses a uid guard without a lookup", () => {
    assert.throws(
      () => createDequeueGuard({ space, field: "object.metadata.uid", ownedSlots: () => new Set() }),
      /lookup/,
    );
  });
});

describe("secondaryShardKey", () => {
  const owner = {
    apiVersion: "example.com/v1",
    kind: "Widget",
    name: "w",
    uid: "owner-uid",
    controller: true,
  };

  it("routes an owned object by its controller owner's uid", () => {
    const cm = {
      metadata: {
        uid: "own-uid",
        namespace: "ns",
        ownerReferences: [{ kind: "Other", name: "o", uid: "not-controller" }, owner],
      },
    };
    assert.equal(controllerOwnerOf(cm), owner);
    assert.equal(secondaryShardKey(cm, "object.metadata.uid"), "owner-uid");
    assert.equal(secondaryShardKey(cm, "object.metadata.namespace"), "ns");
  });

  it("routes an object without a controller owner by its own key", () => {
    const cm = {
      metadata: { uid: "own-uid", namespace: "ns", ownerReferences: [{ ...owner, controller: false }] },
    };
    assert.equal(controllerOwnerOf(cm), undefined);
    assert.equal(secondaryShardKey(cm, "object.metadata.uid"), "own-uid");
    assert.equal(secondaryShardKey({ metadata: {} }, "object.metadata.uid"), "");
  });
});
