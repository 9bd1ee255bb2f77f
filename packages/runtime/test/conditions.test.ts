import { strict as assert } from "node:assert";
import fc from "fast-check";
import {
  findCondition,
  isConditionFalse,
  isConditionTrue,
  removeCondition,
  setCondition,
  type Condition,
} from "../src/index.js";

const t0 = new Date("2026-12-04T10:00:00.123Z");
const t1 = new Date("2026-12-04T10:05:00.456Z");

describe("setCondition", () => {
  const ready = (status: Condition["status"], reason = "Applied", message = "", observedGeneration = 1) => ({
    type: "Ready",
    status,
    reason,
    message,
    observedGeneration,
  });
  const initial = setCondition(undefined, ready("True"), t0).conditions;

  it("stamps a new condition with now (whole seconds) and says it changed", () => {
    const { conditions, changed } = setCondition(undefined, ready("True"), t0);
    assert.equal(changed, true);
    assert.deepEqual(conditions, [
      {
        type: "Ready",
        status: "True",
        observedGeneration: 1,
        lastTransitionTime: "2026-12-04T10:00:00Z",
        reason: "Applied",
        message: "",
      },
    ]);
  });

  const table: Array<{
    what: string;
    input: ReturnType<typeof ready>;
    changed: boolean;
    transition: string;
    generation: number;
  }> = [
    {
      what: "nothing changed",
      input: ready("True"),
      changed: false,
      transition: "2026-12-04T10:00:00Z",
      generation: 1,
    },
    {
      what: "the status changed",
      input: ready("False", "Failed"),
      changed: true,
      transition: "2026-12-04T10:05:00Z",
      generation: 1,
    },
    {
      what: "only the reason changed",
      input: ready("True", "Reapplied"),
      changed: true,
      transition: "2026-12-04T10:00:00Z",
      generation: 1,
    },
    {
      what: "only the message changed",
      input: ready("True", "Applied", "3 of 3"),
      changed: true,
      transition: "2026-12-04T10:00:00Z",
      generation: 1,
    },
    {
      what: "only the generation changed",
      input: ready("True", "Applied", "", 2),
      changed: true,
      transition: "2026-12-04T10:00:00Z",
      generation: 2,
    },
  ];
  for (const row of table) {
    it(`when ${row.what}: changed=${row.changed}, lastTransitionTime ${row.transition}, observedGeneration ${row.generation}`, () => {
      const { conditions, changed } = setCondition(initial, row.input, t1);
      assert.equal(changed, row.changed);
      assert.equal(conditions[0]?.lastTransitionTime, row.transition);
      assert.equal(conditions[0]?.observedGeneration, row.generation);
      assert.equal(conditions[0]?.reason, row.input.reason);
    });
  }

  it("keeps one entry per type, sorted by type; find, isTrue, isFalse, remove", () => {
    let list = setCondition(
      initial,
      { type: "Valid", status: "False", reason: "SchemaViolation" },
      t1,
    ).conditions;
    list = setCondition(list, { type: "Available", status: "True", reason: "Serving" }, t1).conditions;
    assert.deepEqual(
      list.map((c) => c.type),
      ["Available", "Ready", "Valid"],
    );
    assert.equal(isConditionTrue(list, "Ready"), true);
    assert.equal(isConditionFalse(list, "Valid"), true);
    assert.equal(isConditionTrue(list, "Missing"), false);
    assert.equal(findCondition(list, "Valid")?.reason, "SchemaViolation");
    assert.deepEqual(
      removeCondition(list, "Valid").conditions.map((c) => c.type),
      ["Available", "Ready"],
    );
    assert.equal(removeCondition(list, "Nope").changed, false);
  });

  it("refuses what the API server would, saying why", () => {
    assert.throws(
      () => setCondition([], { type: "ready state", status: "True", reason: "Ok" }, t0),
      /type "ready state" is not a CamelCase name/,
    );
    assert.throws(
      () => setCondition([], { type: "Ready", status: "True", reason: "not ok" }, t0),
      /reason "not ok" is not CamelCase/,
    );
    assert.throws(
      () => setCondition([], { type: "Ready", status: "Yes" as "True", reason: "Ok" }, t0),
      /status "Yes"/,
    );
  });

  it("property: any sequence of sets keeps one entry per type, sorted, with transition times that only move forward", () => {
    const op = fc.record({
      type: fc.constantFrom("Ready", "Valid", "Available", "example.com/Synced"),
      status: fc.constantFrom("True" as const, "False" as const, "Unknown" as const),
      reason: fc.constantFrom("A", "B", "C"),
      message: fc.constantFrom("", "m"),
      observedGeneration: fc.integer({ min: 0, max: 5 }),
      advanceSeconds: fc.integer({ min: 0, max: 100 }),
    });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        let list: Condition[] = [];
        let now = t0.getTime();
        const lastTransition = new Map<string, string>();
        for (const { advanceSeconds, ...input } of ops) {
          now += advanceSeconds * 1000;
          const before = findCondition(list, input.type);
          const { conditions, changed } = setCondition(list, input, new Date(now));
          const after = findCondition(conditions, input.type)!;
          assert.equal(new Set(conditions.map((c) => c.type)).size, conditions.length);
          assert.deepEqual(
            conditions.map((c) => c.type),
            [...conditions.map((c) => c.type)].sort(),
          );
          if (before && before.status === input.status)
            assert.equal(after.lastTransitionTime, before.lastTransitionTime);
          const previous = lastTransition.get(input.type);
          if (previous !== undefined) assert.ok(after.lastTransitionTime >= previous);
          lastTransition.set(input.type, after.lastTransitionTime);
          assert.equal(changed, JSON.stringify(before) !== JSON.stringify(after));
          list = conditions;
        }
      }),
    );
  });
});
