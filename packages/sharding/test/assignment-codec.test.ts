import { strict as assert } from "node:assert";
import fc from "fast-check";
import { AssignmentFormatError, decodeAssignment, encodeAssignment, type Assignment } from "../src/ranges.js";

const assignment: fc.Arbitrary<Assignment> = fc.constantFrom(1, 4, 16, 256).chain((S) =>
  fc
    .record({
      epoch: fc.integer({ min: 1, max: 1000 }),
      owners: fc.array(fc.option(fc.constantFrom("pod-a", "pod-b", "pod-c"), { nil: undefined }), {
        minLength: S,
        maxLength: S,
      }),
      marks: fc.array(fc.boolean(), { minLength: S, maxLength: S }),
    })
    .chain(({ epoch, owners, marks }) =>
      fc.array(fc.integer({ min: 1, max: epoch }), { minLength: S, maxLength: S }).map((since) => ({
        epoch,
        owners,
        releasing: new Map(
          owners.flatMap((o, i) => (o !== undefined && marks[i] ? [[i, since[i]!] as [number, number]] : [])),
        ),
      })),
    ),
);

describe("assignment codec", () => {
  it("round-trips any assignment", () => {
    fc.assert(
      fc.property(assignment, (a) => {
        const back = decodeAssignment(encodeAssignment(a), "ConfigMap t/x");
        assert.equal(back.epoch, a.epoch);
        assert.deepEqual(back.owners, a.owners);
        assert.deepEqual(
          [...back.releasing].sort((x, y) => x[0] - y[0]),
          [...a.releasing].sort((x, y) => x[0] - y[0]),
        );
      }),
    );
  });

  it("stores runs, so a settled table is short", () => {
    const owners = Array.from({ length: 256 }, (_, i) => (i < 128 ? "pod-a" : "pod-b"));
    const data = encodeAssignment({ epoch: 7, owners, releasing: new Map() });
    assert.deepEqual(data, {
      epoch: "7",
      slotCount: "256",
      owners: '[[0,128,"pod-a"],[128,256,"pod-b"]]',
      releasing: "[]",
    });
  });

  it("rejects damaged data, naming the resource and the problem", () => {
    const good = encodeAssignment({ epoch: 2, owners: ["a", "b"], releasing: new Map([[1, 2]]) });
    const cases: ReadonlyArray<readonly [Record<string, string> | undefined, RegExp]> = [
      [undefined, /no data/],
      [{ ...good, epoch: "x" }, /epoch "x"/],
      [{ ...good, slotCount: "3" }, /slotCount: slot count 3 is not allowed/],
      [{ ...good, owners: "{" }, /owners is not JSON/],
      [{ ...good, owners: '[[0,1,"a"]]' }, /slot 1 is missing/],
      [{ ...good, owners: '[[0,2,"a"],[1,2,"b"]]' }, /slot 1 appears twice/],
      [{ ...good, owners: '[[0,3,"a"]]' }, /not a slot range/],
      [{ ...good, releasing: "[[1,2,3]]" }, /bad epoch/],
      [{ ...good, owners: '[[0,1,"a"],[1,2,null]]' }, /slot 1 is releasing but has no owner/],
    ];
    for (const [data, problem] of cases) {
      assert.throws(
        () => decodeAssignment(data, "ConfigMap t/ring-assignment"),
        (e: unknown) =>
          e instanceof AssignmentFormatError &&
          e.message.startsWith("ConfigMap t/ring-assignment does not hold a valid shard assignment") &&
          problem.test(e.message),
      );
    }
  });
});
