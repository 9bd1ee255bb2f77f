import { strict as assert } from "node:assert";
import fc from "fast-check";
import { assertTiling, fnv1a64, HASH_SPACE, SlotCountError, SlotSpace } from "../src/ranges.js";

const slotCounts = fc.integer({ min: 0, max: 16 }).map((b) => 2 ** b);

describe("SlotSpace", () => {
  it("defaults to 256 slots, slot i covering [i * 2^64 / S, (i+1) * 2^64 / S)", () => {
    const space = new SlotSpace();
    assert.equal(space.slotCount, 256);
    assert.deepEqual(space.rangeOf(0), { start: 0n, end: 1n << 56n });
    assert.deepEqual(space.rangeOf(255), { start: 255n << 56n, end: HASH_SPACE });
    assert.equal(
      space.selectorFor("object.metadata.uid", [0, 1, 2, 128]).toString(),
      "shardRange(object.metadata.uid, '0x0000000000000000', '0x0300000000000000') || " +
        "shardRange(object.metadata.uid, '0x8000000000000000', '0x8100000000000000')",
    );
  });

  it("puts every hash in the slot whose range holds it", () => {
    fc.assert(
      fc.property(slotCounts, fc.uuid(), (S, uid) => {
        const space = new SlotSpace(S);
        const slot = space.slotOfKey(uid);
        const h = fnv1a64(uid);
        const r = space.rangeOf(slot);
        assert.ok(h >= r.start && h < r.end, `${uid} hash ${h} not in slot ${slot} of ${S}`);
      }),
    );
  });

  it("maps all slots to ranges that tile the space, and any subset to merged runs", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10 }).map((b) => 2 ** b),
        fc.array(fc.nat(), { maxLength: 40 }),
        (S, picks) => {
          const space = new SlotSpace(S);
          assertTiling(Array.from({ length: S }, (_, i) => space.rangeOf(i)));
          assert.deepEqual(space.rangesOf(Array.from({ length: S }, (_, i) => i)), [
            { start: 0n, end: HASH_SPACE },
          ]);
          const slots = picks.map((p) => p % S);
          const ranges = space.rangesOf(slots);
          for (let i = 1; i < ranges.length; i++)
            assert.ok(ranges[i - 1]!.end < ranges[i]!.start, "not merged");
          for (let s = 0; s < S; s++) {
            const { start } = space.rangeOf(s);
            assert.equal(
              ranges.some((r) => start >= r.start && start < r.end),
              slots.includes(s),
            );
          }
        },
      ),
    );
  });

  it("rejects a slot count that is not a power of two, with the accepted values", () => {
    for (const bad of [0, 3, 100, 255, -256, 1.5, 131072]) {
      assert.throws(
        () => new SlotSpace(bad),
        (e: unknown) =>
          e instanceof SlotCountError &&
          /must be a power of two from 1 to 65536/.test(e.message) &&
          e.slotCount === bad,
      );
    }
  });

  it("rejects fewer slots than members, naming the smallest count that fits", () => {
    const space = new SlotSpace(4);
    space.assertFits(4);
    assert.throws(() => space.assertFits(5), /slot count 4 is smaller than the 5 members.*at least 8 slots/);
  });

  it("refuses slots outside the table and empty selectors", () => {
    const space = new SlotSpace(8);
    assert.throws(() => space.rangeOf(8), RangeError);
    assert.throws(() => space.rangesOf([-1]), RangeError);
    assert.throws(() => space.selectorFor("object.metadata.uid", []), /no range/);
  });
});
