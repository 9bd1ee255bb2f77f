import { strict as assert } from "node:assert";
import fc from "fast-check";
import { planSlots, SlotCountError, SlotSpace, type SlotOwners } from "../src/ranges.js";

const POOL = ["m-a", "m-b", "m-c", "m-d", "m-e", "m-f", "m-g", "m-h", "m-i", "m-j"];

/** The fewest moves any balanced plan needs: departed/unowned slots plus the excess over the best shares. */
function minimalMoves(current: SlotOwners, members: readonly string[]): number {
  const live = new Set(members);
  const S = current.length;
  const counts = members.map((m) => current.filter((o) => o === m).length).sort((a, b) => b - a);
  const orphans = current.filter((o) => o === undefined || !live.has(o)).length;
  const base = Math.floor(S / members.length);
  const larger = S % members.length;
  return orphans + counts.reduce((sum, c, i) => sum + Math.max(0, c - (base + (i < larger ? 1 : 0))), 0);
}

function assertBalancedTiling(owners: SlotOwners, members: readonly string[]): void {
  const S = owners.length;
  const live = new Set(members);
  for (const o of owners) assert.ok(o !== undefined && live.has(o), `slot owned by ${String(o)}`);
  for (const m of members) {
    const n = owners.filter((o) => o === m).length;
    assert.ok(
      n === Math.floor(S / members.length) || n === Math.ceil(S / members.length),
      `${m} owns ${n} of ${S}`,
    );
  }
}

function rangesPerMember(owners: SlotOwners, members: readonly string[]): Map<string, number> {
  const space = new SlotSpace(owners.length);
  return new Map(
    members.map((m) => [m, space.rangesOf(owners.flatMap((o, i) => (o === m ? [i] : []))).length]),
  );
}

const scenario = fc.integer({ min: 0, max: 9 }).chain((bits) =>
  fc.record({
    current: fc.array(fc.option(fc.constantFrom(...POOL, "gone-1", "gone-2"), { nil: undefined }), {
      minLength: 2 ** bits,
      maxLength: 2 ** bits,
    }),
    members: fc.shuffledSubarray(POOL, { minLength: 1, maxLength: Math.min(POOL.length, 2 ** bits) }),
  }),
);

describe("planSlots", () => {
  it("on first start gives every member one contiguous, balanced run", () => {
    const plan = planSlots(new Array<undefined>(256).fill(undefined), ["m-c", "m-a", "m-b"]);
    assertBalancedTiling(plan.owners, ["m-a", "m-b", "m-c"]);
    assert.deepEqual([...rangesPerMember(plan.owners, ["m-a", "m-b", "m-c"]).values()], [1, 1, 1]);
    assert.equal(plan.owners[0], "m-a");
    assert.equal(plan.moved, 256);
  });

  it("tiles, balances within one slot and moves only what balance needs, from any table", () => {
    fc.assert(
      fc.property(scenario, ({ current, members }) => {
        const plan = planSlots(current, members);
        assertBalancedTiling(plan.owners, members);
        assert.equal(plan.moved, minimalMoves(current, members));
        for (const m of members) assert.equal(plan.counts.get(m), plan.owners.filter((o) => o === m).length);
      }),
      { numRuns: 300 },
    );
  });

  it("is deterministic whatever the order of members, and a balanced table is a fixpoint", () => {
    fc.assert(
      fc.property(scenario, ({ current, members }) => {
        const plan = planSlots(current, members);
        assert.deepEqual(planSlots(current, [...members].reverse()).owners, plan.owners);
        const again = planSlots(plan.owners, members);
        assert.equal(again.moved, 0);
        assert.deepEqual(again.owners, plan.owners);
      }),
      { numRuns: 200 },
    );
  });

  it("keeps tiling and balance over any sequence of joins, leaves and crashes", () => {
    type Step = { kind: "join" } | { kind: "leave" | "crash"; pick: number };
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.constant({ kind: "join" as const }),
      fc.record({ kind: fc.constantFrom("leave" as const, "crash" as const), pick: fc.nat() }),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(16, 64, 256),
        fc.array(step, { minLength: 1, maxLength: 30 }),
        (S, steps) => {
          let owners: (string | undefined)[] = new Array<undefined>(S).fill(undefined);
          let members: string[] = ["member-0"];
          let next = 1;
          owners = [...planSlots(owners, members).owners];
          for (const s of steps) {
            if (s.kind === "join") {
              if (members.length === S) continue;
              members = [...members, `member-${next++}`];
            } else {
              if (members.length === 1) continue;
              const gone = members[s.pick % members.length]!;
              members = members.filter((m) => m !== gone);
              // a graceful leave hands its slots back; a crash leaves them with the dead owner
              if (s.kind === "leave") owners = owners.map((o) => (o === gone ? undefined : o));
            }
            const before = owners;
            const plan = planSlots(before, members);
            assertBalancedTiling(plan.owners, members);
            assert.equal(plan.moved, minimalMoves(before, members));
            // a member that only gives slots away gives them at the edges of its runs: it never gets more ranges
            const rangesBefore = rangesPerMember(before, members);
            const rangesAfter = rangesPerMember(plan.owners, members);
            for (const m of members) {
              const gaveOnly = plan.owners.every((o, i) => o !== m || before[i] === m);
              if (gaveOnly) assert.ok(rangesAfter.get(m)! <= rangesBefore.get(m)!, `${m} was split`);
            }
            owners = [...plan.owners];
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it("moves within 2 percentage points of 1/(N+1) of the space going from N to N+1 members, N = 1..16", () => {
    let owners: SlotOwners = planSlots(new Array<undefined>(256).fill(undefined), ["member-00"]).owners;
    for (let n = 1; n <= 16; n++) {
      const members = Array.from({ length: n + 1 }, (_, i) => `member-${String(i).padStart(2, "0")}`);
      const plan = planSlots(owners, members);
      const fraction = plan.moved / 256;
      assert.ok(
        Math.abs(fraction - 1 / (n + 1)) <= 0.02,
        `${n} -> ${n + 1}: moved ${fraction}, 1/(N+1) = ${1 / (n + 1)}`,
      );
      const ranges = rangesPerMember(plan.owners, members);
      // the newcomer takes at most one piece per donor (two neighbouring donors often give one piece together)
      assert.ok(ranges.get(members[n]!)! <= n, `newcomer has ${ranges.get(members[n]!)} ranges`);
      owners = plan.owners;
    }
  });

  it("after a crash, neighbours of the lost run extend their own ranges", () => {
    const start = planSlots(new Array<undefined>(16).fill(undefined), ["a", "b", "c", "d"]);
    // four runs of four: a a a a b b b b c c c c d d d d; b crashes
    const plan = planSlots(start.owners, ["a", "c", "d"]);
    assertBalancedTiling(plan.owners, ["a", "c", "d"]);
    assert.equal(plan.moved, 4);
    const ranges = rangesPerMember(plan.owners, ["a", "c", "d"]);
    assert.equal(ranges.get("a")! + ranges.get("c")!, 2, "a and c grow into b's run without new ranges");
  });

  it("with no members, owns nothing", () => {
    const plan = planSlots(["a", "b"], []);
    assert.deepEqual(plan.owners, [undefined, undefined]);
    assert.equal(plan.moved, 2);
  });

  it("rejects a bad slot table, more members than slots and repeated members", () => {
    assert.throws(() => planSlots(new Array<undefined>(100).fill(undefined), ["a"]), SlotCountError);
    assert.throws(
      () => planSlots(new Array<undefined>(2).fill(undefined), ["a", "b", "c"]),
      /smaller than the 3 members/,
    );
    assert.throws(() => planSlots(new Array<undefined>(4).fill(undefined), ["a", "a"]), /listed twice/);
    assert.throws(() => planSlots(new Array<undefined>(4).fill(undefined), [""]), /empty/);
  });
});
