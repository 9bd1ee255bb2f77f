import { strict as assert } from "node:assert";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { assignmentFromJson, renderRing, ringToJson, type RingSnapshot } from "../src/index.js";

// Golden files live in the source tree (test/golden), next to this file's source.
const golden = join(dirname(fileURLToPath(import.meta.url)), "../../test/golden");

/** A fixed three-member ring of 64 slots mid-handover: c is joining, a and b release slots to it. */
function threeMembers(): RingSnapshot {
  const owners: (string | undefined)[] = [
    ...Array<string>(22).fill("replica-a"),
    ...Array<string>(21).fill("replica-b"),
    ...Array<string>(14).fill("replica-c"),
    ...Array<undefined>(7).fill(undefined),
  ];
  const releasing = new Map<number, number>([
    [20, 9],
    [21, 9],
    [41, 9],
    [42, 9],
  ]);
  return {
    ring: "orders",
    namespace: "shop",
    coordinator: "replica-a",
    assignment: { epoch: 9, owners, releasing },
    members: [
      {
        identity: "replica-a",
        holding: true,
        acknowledgedEpoch: 9,
        objectsCached: 3412,
        serverFiltering: true,
      },
      {
        identity: "replica-b",
        holding: true,
        acknowledgedEpoch: 8,
        objectsCached: 3301,
        serverFiltering: true,
      },
      {
        identity: "replica-c",
        holding: true,
        acknowledgedEpoch: 9,
        objectsCached: 2187,
        serverFiltering: false,
      },
    ],
  };
}

describe("tessera shards: drawing a ring", () => {
  it("matches the golden drawing of a fixed three-member assignment", () => {
    const drawn = renderRing(threeMembers());
    const file = join(golden, "shards-three-members.txt");
    if (process.env["UPDATE_GOLDEN"]) writeFileSync(file, drawn);
    assert.equal(drawn, readFileSync(file, "utf8"));
  });

  it("--json round-trips the assignment", () => {
    const ring = threeMembers();
    const json = JSON.parse(JSON.stringify(ringToJson(ring))) as ReturnType<typeof ringToJson>;
    assert.deepEqual(assignmentFromJson(json), ring.assignment);
    assert.deepEqual(
      json.members.map((m) => [m.identity, m.slots, m.releasing]),
      [
        ["replica-a", 22, 2],
        ["replica-b", 21, 2],
        ["replica-c", 14, 0],
      ],
    );
  });

  it("colours each member only when asked", () => {
    const ESC = String.fromCharCode(27);
    assert.ok(!renderRing(threeMembers()).includes(ESC));
    assert.ok(renderRing(threeMembers(), { color: true }).includes(`${ESC}[36mreplica-a`));
  });
});
