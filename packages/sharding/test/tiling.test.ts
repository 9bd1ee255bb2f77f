import { strict as assert } from "node:assert";
import fc from "fast-check";
import {
  assertTiling,
  checkTiling,
  HASH_SPACE,
  mergeRanges,
  rangesSize,
  TilingError,
  type HashRange,
} from "../src/ranges.js";

/** Cut [0, 2^64) at the given points into consecutive ranges. */
function cut(points: readonly bigint[]): HashRange[] {
  const bounds = [...new Set([0n, ...points.filter((p) => p > 0n && p < HASH_SPACE), HASH_SPACE])].sort(
    (a, b) => (a < b ? -1 : 1),
  );
  return bounds.slice(1).map((end, i) => ({ start: bounds[i]!, end }));
}

const points = fc.array(fc.bigInt({ min: 1n, max: HASH_SPACE - 1n }), { maxLength: 20 });

describe("checkTiling", () => {
  it("accepts any cut of the space, in any order", () => {
    fc.assert(
      fc.property(points, fc.infiniteStream(fc.nat()), (ps, seeds) => {
        const ranges = cut(ps);
        const shuffled = ranges
          .map((r) => ({ r, k: seeds.next().value as number }))
          .sort((a, b) => a.k - b.k);
        assert.deepEqual(checkTiling(shuffled.map((x) => x.r)), {
          ok: true,
          gaps: [],
          overlaps: [],
          invalid: [],
        });
      }),
    );
  });

  it("reports the exact gap left by a missing range", () => {
    fc.assert(
      fc.property(points, fc.nat(), (ps, k) => {
        const ranges = cut(ps);
        const [missing] = ranges.splice(k % ranges.length, 1);
        const report = checkTiling(ranges);
        assert.equal(report.ok, false);
        assert.deepEqual(report.gaps, [missing]);
        assert.deepEqual(report.overlaps, []);
      }),
    );
  });

  it("reports the exact overlap of a duplicated range", () => {
    fc.assert(
      fc.property(points, fc.nat(), (ps, k) => {
        const ranges = cut(ps);
        const dup = ranges[k % ranges.length]!;
        const report = checkTiling([...ranges, { ...dup }]);
        assert.equal(report.ok, false);
        assert.deepEqual(report.gaps, []);
        assert.deepEqual(report.overlaps, [dup]);
      }),
    );
  });

  it("rejects malformed ranges and names gaps and overlaps in the error", () => {
    assert.equal(checkTiling([{ start: 0n, end: HASH_SPACE + 1n }]).invalid.length, 1);
    assert.equal(checkTiling([]).gaps.length, 1);
    assert.throws(
      () =>
        assertTiling([
          { start: 0n, end: 10n },
          { start: 5n, end: 20n },
          { start: 30n, end: HASH_SPACE },
        ]),
      (e: unknown) =>
        e instanceof TilingError &&
        /gaps \[0x0000000000000014, 0x000000000000001e\)/.test(e.message) &&
        /overlaps \[0x0000000000000005, 0x000000000000000a\)/.test(e.message),
    );
  });
});

describe("mergeRanges", () => {
  it("keeps the same hashes with sorted, disjoint, non-adjacent ranges", () => {
    const r = fc
      .tuple(fc.bigInt({ min: 0n, max: 1000n }), fc.bigInt({ min: 1n, max: 100n }))
      .map(([s, len]) => ({ start: s, end: s + len }));
    fc.assert(
      fc.property(fc.array(r, { maxLength: 10 }), (ranges) => {
        const merged = mergeRanges(ranges);
        for (let i = 1; i < merged.length; i++) assert.ok(merged[i - 1]!.end < merged[i]!.start);
        for (let h = 0n; h < 1200n; h += 7n) {
          assert.equal(
            merged.some((m) => h >= m.start && h < m.end),
            ranges.some((m) => h >= m.start && h < m.end),
          );
        }
        assert.equal(rangesSize(merged), rangesSize(ranges));
      }),
    );
  });
});
