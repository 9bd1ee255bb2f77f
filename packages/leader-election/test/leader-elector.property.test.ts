import { strict as assert } from "node:assert";
import fc from "fast-check";
import type { InMemoryLockFault } from "../src/index.js";
import { ElectionHarness } from "./election-harness.js";
import { assertNoOverlap } from "./leading-intervals.js";

type Step =
  | { kind: "wait"; ms: number }
  | { kind: "fault"; who: number; fault: InMemoryLockFault | undefined }
  | { kind: "stop"; who: number }
  | { kind: "start"; who: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant("wait" as const), ms: fc.integer({ min: 1, max: 6_000 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("fault" as const),
      who: fc.integer({ min: 0, max: 2 }),
      fault: fc.constantFrom<InMemoryLockFault | undefined>("unreachable", "hang", undefined, undefined),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("stop" as const), who: fc.integer({ min: 0, max: 2 }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("start" as const), who: fc.integer({ min: 0, max: 2 }) }),
  },
);

describe("LeaderElector under random faults (property)", () => {
  it("never has two leaders, and a healthy replica leads once faults clear", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 5, maxLength: 40 }),
        fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        async (steps, release, seed) => {
          let state = seed;
          const random = () => {
            state = (state * 1103515245 + 12345) % 2 ** 31;
            return state / 2 ** 31;
          };
          const h = new ElectionHarness();
          const candidates = ["a", "b", "c"].map((id, i) =>
            h.add(id, { releaseOnCancel: release[i]!, random }),
          );
          for (const c of candidates) c.run();
          for (const s of steps) {
            const c = "who" in s ? candidates[s.who]! : undefined;
            if (s.kind === "wait") await h.clock.advance(s.ms);
            else if (s.kind === "fault") c!.lock.fault = s.fault;
            else if (s.kind === "stop") c!.stop.abort();
            else if (c!.settled) c!.run();
            assert.ok(h.leaders().length <= 1, `leaders at once: ${h.leaders().join(", ")}`);
          }
          assertNoOverlap(h.intervals());

          // Heal everything; with all three campaigning, someone must lead.
          for (const c of candidates) c.lock.fault = undefined;
          await h.clock.advance(5_000);
          for (const c of candidates) if (c.settled) c.run();
          await h.clock.advance(3_000 + 5 * 1_100);
          assert.equal(h.leaders().length, 1, "no leader after the faults cleared");
          assertNoOverlap(h.intervals());
        },
      ),
      { numRuns: 150 },
    );
  });
});
