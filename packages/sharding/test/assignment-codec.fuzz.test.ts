import { strict as assert } from "node:assert";
import fc from "fast-check";
import { KubeConfig } from "@kubernetes/client-node";
import { CapturingLogger, FakeClock } from "@tessera/core/testing";
import { ShardMember } from "../src/index.js";
import {
  advanceAssignment,
  AssignmentFormatError,
  decodeAssignment,
  emptyAssignment,
  encodeAssignment,
  SlotSpace,
  type Assignment,
  type EncodedAssignment,
} from "../src/ranges.js";
import { fuzz, fuzzAsync } from "@tessera/core/testing/fuzz";
import { InMemoryLeaseClient } from "./in-memory-lease-client.js";

// The assignment ConfigMap can be hand-edited or corrupted: decodeAssignment
// must refuse it with an AssignmentFormatError naming the ConfigMap and the
// problem, and a member that reads it must keep the last good assignment.

const RESOURCE = "ConfigMap ring-ns/web-assignment";

/** Decodes `data`; checks the result is a consistent assignment or the error is an AssignmentFormatError. */
function decodeOrRefuse(data: unknown): Assignment | AssignmentFormatError {
  try {
    const a = decodeAssignment(data as EncodedAssignment, RESOURCE);
    assert.ok(Number.isSafeInteger(a.epoch) && a.epoch >= 0);
    new SlotSpace(a.owners.length); // a power of two within bounds
    for (const o of a.owners) assert.ok(o === undefined || (typeof o === "string" && o !== ""));
    for (const [slot, since] of a.releasing) {
      assert.ok(a.owners[slot] !== undefined, `slot ${slot} releasing without an owner`);
      assert.ok(Number.isSafeInteger(since) && since >= 1 && since <= a.epoch);
    }
    // Numbers are read only as written by encodeAssignment: an emptied or hand-typed epoch ("", " ",
    // "1e3", "0x10") is not silently read as another epoch.
    const given = data as Record<string, unknown>;
    assert.equal(given["epoch"], String(a.epoch), "epoch read from a non-canonical number");
    assert.equal(given["slotCount"], String(a.owners.length), "slotCount read from a non-canonical number");
    // What decodes encodes back to the same assignment.
    assert.deepEqual(decodeAssignment(encodeAssignment(a), RESOURCE), a);
    return a;
  } catch (error) {
    assert.ok(error instanceof AssignmentFormatError, `not an AssignmentFormatError: ${String(error)}`);
    assert.equal(error.resource, RESOURCE);
    assert.match(
      error.message,
      /^ConfigMap ring-ns\/web-assignment does not hold a valid shard assignment: .+/,
    );
    return error;
  }
}

const assignment: fc.Arbitrary<Assignment> = fc
  .record({
    slots: fc.constantFrom(1, 2, 8, 64),
    members: fc.uniqueArray(fc.constantFrom("a", "b", "c", "d"), { minLength: 1, maxLength: 4 }),
    steps: fc.integer({ min: 1, max: 4 }),
  })
  .map(({ slots, members, steps }) => {
    let a = emptyAssignment(slots);
    for (let i = 0; i < steps; i++) {
      a = advanceAssignment(a, { members: members.slice(0, i + 1), acknowledged: () => undefined }) ?? a;
    }
    return a;
  });

const KEYS = ["epoch", "slotCount", "owners", "releasing"] as const;
const oddValue = fc.oneof(
  fc.string(),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.constantFrom(
    "",
    " ",
    "-1",
    "1e3",
    "0x10",
    "9007199254740993",
    "65536",
    "131072",
    '[[0,1e9,"a"]]',
    '[[0,1,""]]',
    "null",
  ),
);

/** A valid encoding, then hand-edited: a field removed, replaced, its JSON runs edited, or its text damaged. */
const edited = fc
  .record({
    a: assignment,
    key: fc.constantFrom(...KEYS),
    edit: fc.oneof(
      fc.constant({ kind: "remove" as const }),
      oddValue.map((value) => ({ kind: "replace" as const, value })),
      fc.record({
        kind: fc.constant("run" as const),
        index: fc.nat(),
        field: fc.nat(2),
        value: fc.jsonValue(),
      }),
      fc.record({
        kind: fc.constant("damage" as const),
        at: fc.nat(),
        cut: fc.boolean(),
        ch: fc.string({ maxLength: 2 }),
      }),
    ),
    extra: fc.option(fc.tuple(fc.string(), fc.string()), { nil: undefined }),
  })
  .map(({ a, key, edit, extra }) => {
    const data: Record<string, string> = { ...encodeAssignment(a) };
    const text = data[key]!;
    if (edit.kind === "remove") delete data[key];
    else if (edit.kind === "replace") data[key] = edit.value;
    else if (edit.kind === "run") {
      const runs = JSON.parse(key === "owners" || key === "releasing" ? text : "[[0,0,0]]") as unknown[][];
      if (runs.length > 0) runs[edit.index % runs.length]![edit.field] = edit.value;
      data[key === "owners" || key === "releasing" ? key : "owners"] = JSON.stringify(runs);
    } else {
      const i = edit.at % (text.length + 1);
      data[key] = edit.cut ? text.slice(0, i) : text.slice(0, i) + edit.ch + text.slice(i + 1);
    }
    if (extra) data[extra[0]] = extra[1];
    return data;
  });

describe("assignment decoding (fuzz)", () => {
  it("arbitrary data maps: a consistent assignment, or an AssignmentFormatError naming the ConfigMap", () => {
    fuzz(
      "assignment: arbitrary data maps",
      fc.oneof(
        fc.dictionary(fc.string(), fc.string()),
        fc.record(
          { epoch: oddValue, slotCount: oddValue, owners: oddValue, releasing: oddValue },
          { requiredKeys: [] },
        ),
        // Past what a ConfigMap's data allows (strings only), as a caller that skipped the API server might pass.
        fc.oneof(fc.jsonValue(), fc.dictionary(fc.constantFrom(...KEYS), fc.jsonValue())),
      ),
      (data) => void decodeOrRefuse(data),
      1500,
    );
  });

  it("hand-edited valid encodings: a consistent assignment, or an AssignmentFormatError naming the ConfigMap", () => {
    fuzz("assignment: hand-edited encodings", edited, (data) => void decodeOrRefuse(data), 1500);
  });

  it("a member that reads a corrupted assignment keeps its slots and logs why", async () => {
    await fuzzAsync(
      "assignment: member keeps the last good assignment",
      edited.filter((data) => decodeOrRefuse(data) instanceof AssignmentFormatError),
      async (corrupted) => {
        const clock = new FakeClock();
        const logger = new CapturingLogger();
        const leases = new InMemoryLeaseClient();
        // What the ConfigMap holds now; read as ConfigMapAssignmentStore.read decodes it.
        let data: EncodedAssignment | undefined;
        const member = new ShardMember({
          kubeConfig: new KubeConfig(),
          namespace: "ring-ns",
          ring: "web",
          identity: "a",
          leases,
          store: {
            read: () =>
              Promise.resolve(data && { assignment: decodeAssignment(data, RESOURCE), version: "1" }),
          },
          clock,
          logger,
          pollIntervalMs: 100,
          leaseDurationMs: 3_000,
          renewDeadlineMs: 2_000,
          retryPeriodMs: 500,
        });
        const stop = new AbortController();
        const running = member.run(stop.signal);
        try {
          assert.ok(await member.joined());
          data = encodeAssignment(
            advanceAssignment(emptyAssignment(8), { members: ["a", "b"], acknowledged: () => undefined })!,
          );
          await clock.advance(100);
          const good = [...member.activeSlots];
          assert.deepEqual(good, [0, 1, 2, 3]);
          data = corrupted;
          await clock.advance(300);
          assert.deepEqual([...member.activeSlots], good, "the slots of the last good assignment are kept");
          const warned = logger.matching(/could not apply the assignment/, "warn");
          assert.ok(warned.length > 0, "the refusal is logged");
          assert.match(
            String(warned[0]!.fields["error"]),
            /web-assignment does not hold a valid shard assignment/,
          );
        } finally {
          stop.abort();
          await running;
        }
      },
      60,
    );
  });
});

// Counterexamples the fuzz targets found (shrunk), kept as examples.
describe("assignment decoding (found by fuzzing)", () => {
  it("refuses an emptied or hand-typed epoch instead of reading it as another number", () => {
    const good = encodeAssignment({ epoch: 5, owners: ["a"], releasing: new Map() });
    for (const epoch of ["", " ", "1e3", "0x10", "05", "+5", "5.0"]) {
      assert.throws(
        () => decodeAssignment({ ...good, epoch }, RESOURCE),
        (e: unknown) =>
          e instanceof AssignmentFormatError &&
          e.message.includes(`epoch ${JSON.stringify(epoch)} is not a whole number`),
        `epoch ${JSON.stringify(epoch)}`,
      );
    }
    assert.throws(
      () => decodeAssignment({ ...good, slotCount: "" }, RESOURCE),
      (e: unknown) =>
        e instanceof AssignmentFormatError && /slotCount "" is not a whole number/.test(e.message),
    );
  });
});
