import { strict as assert } from "node:assert";
import fc from "fast-check";
import { checkTiling, diffRanges, HASH_SPACE, mergeRanges, type HashRange } from "../src/ranges.js";

const S = HASH_SPACE / 16n;
/** Slots [a, b) of a 16-slot space as a range. */
const r = (a: number, b: number): HashRange => ({ start: BigInt(a) * S, end: BigInt(b) * S });

describe("diffRanges", () => {
  it("keeps whole ranges, stops lost ones, splits shrunk ones and starts only what is new", () => {
    const current = [r(0, 4), r(4, 6), r(8, 12), r(12, 16)];
    const diff = diffRanges(current, [r(0, 6), r(9, 11), r(6, 7)]);
    assert.deepEqual(diff.kept, [0, 1], "a kept range is not merged with its new neighbour");
    assert.deepEqual(diff.stopped, [3]);
    assert.deepEqual(diff.split, [{ index: 2, parts: [r(9, 11)] }]);
    assert.deepEqual(diff.started, [r(6, 7)]);
  });

  it("splits a range that keeps two separate pieces into both", () => {
    const diff = diffRanges([r(0, 8)], [r(0, 2), r(5, 8)]);
    assert.deepEqual(diff.split, [{ index: 0, parts: [r(0, 2), r(5, 8)] }]);
    assert.deepEqual(diff.started, []);
  });

  it("starts everything from nothing and stops everything for nothing", () => {
    assert.deepEqual(diffRanges([], [r(2, 3), r(3, 5)]).started, [r(2, 5)]);
    const none = diffRanges([r(0, 1), r(1, 2)], []);
    assert.deepEqual(none.stopped, [0, 1]);
    assert.deepEqual(none.started, []);
  });

  it("always watches exactly the target: kept, split pieces and started tile it, and only new hashes are started", () => {
    const run = fc
      .array(fc.integer({ min: 0, max: 16 }), { maxLength: 10 })
      .map((cuts) => [...new Set([0, ...cuts, 16])].sort((a, b) => a - b));
    fc.assert(
      fc.property(run, fc.array(fc.boolean(), { minLength: 16, maxLength: 16 }), (cuts, wantSlot) => {
        const all = cuts.slice(1).map((b, i) => r(cuts[i]!, b));
        const current = all.filter((_, i) => i % 2 === 0);
        const target = wantSlot.flatMap((w, i) => (w ? [r(i, i + 1)] : []));
        const diff = diffRanges(current, target);
        const watched = [
          ...diff.kept.map((i) => current[i]!),
          ...diff.split.flatMap((s) => s.parts),
          ...diff.started,
        ];
        const wanted = mergeRanges(target);
        assert.deepEqual(mergeRanges(watched), wanted);
        if (wanted.length > 0) {
          // pieces never overlap one another
          const report = checkTiling([...watched, ...complement(wanted)]);
          assert.ok(
            report.ok,
            JSON.stringify(report, (_: string, v: unknown) => (typeof v === "bigint" ? String(v) : v)),
          );
        }
        for (const s of diff.started) {
          for (const c of current)
            assert.ok(s.end <= c.start || s.start >= c.end, "started overlaps a watched range");
        }
        assert.equal(
          diff.kept.length + diff.stopped.length + diff.split.length,
          current.length,
          "every current range is accounted for once",
        );
      }),
    );
  });
});

function complement(sorted: HashRange[]): HashRange[] {
  const out: HashRange[] = [];
  let cursor = 0n;
  for (const x of sorted) {
    if (x.start > cursor) out.push({ start: cursor, end: x.start });
    cursor = x.end;
  }
  if (cursor < HASH_SPACE) out.push({ start: cursor, end: HASH_SPACE });
  return out;
}
