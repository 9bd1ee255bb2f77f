import { strict as assert } from "node:assert";
import fc from "fast-check";
import {
  activeSlotsOf,
  advanceAssignment,
  emptyAssignment,
  isSettled,
  releasingSlotsOf,
  ringParticipants,
  SlotCountError,
  type Assignment,
} from "../src/ranges.js";

interface SimMember {
  alive: boolean; // false once crashed or left: it works on nothing
  inLease: boolean; // whether the coordinator still counts it (a crashed member until its lease expires)
  acked?: number;
  working: Set<number>;
}

type Action =
  { kind: "join" } | { kind: "leave" | "crash" | "expire" | "apply"; pick: number } | { kind: "advance" };

const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 2, arbitrary: fc.constant({ kind: "join" as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("leave" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("crash" as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("expire" as const), pick: fc.nat() }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("apply" as const), pick: fc.nat() }) },
  { weight: 4, arbitrary: fc.constant({ kind: "advance" as const }) },
);

class Ring {
  published: Assignment;
  readonly members = new Map<string, SimMember>();
  private next = 0;

  constructor(readonly slots: number) {
    this.published = emptyAssignment(slots);
  }

  private pick(n: number, filter: (m: SimMember) => boolean): string | undefined {
    const ids = [...this.members].filter(([, m]) => filter(m)).map(([id]) => id);
    return ids.length === 0 ? undefined : ids[n % ids.length];
  }

  do(a: Action): void {
    switch (a.kind) {
      case "join":
        if ([...this.members.values()].filter((m) => m.inLease).length < this.slots) {
          this.members.set(`m${this.next++}`, { alive: true, inLease: true, working: new Set() });
        }
        return;
      case "leave": {
        // graceful: stop all work, then release the lease
        const id = this.pick(a.pick, (m) => m.alive);
        if (id) Object.assign(this.members.get(id)!, { alive: false, inLease: false, working: new Set() });
        return;
      }
      case "crash": {
        // self-fenced before its lease can expire: works on nothing, still counted until expiry
        const id = this.pick(a.pick, (m) => m.alive);
        if (id) Object.assign(this.members.get(id)!, { alive: false, working: new Set() });
        return;
      }
      case "expire": {
        const id = this.pick(a.pick, (m) => !m.alive && m.inLease);
        if (id) this.members.get(id)!.inLease = false;
        return;
      }
      case "apply": {
        // a member applies the latest assignment: drops released slots' work, starts granted ones, acknowledges
        const id = this.pick(a.pick, (m) => m.alive);
        if (!id) return;
        const m = this.members.get(id)!;
        m.working = activeSlotsOf(this.published, id);
        m.acked = this.published.epoch;
        return;
      }
      case "advance": {
        const next = advanceAssignment(this.published, {
          members: [...this.members].filter(([, m]) => m.inLease).map(([id]) => id),
          acknowledged: (id) => this.members.get(id)?.acked,
        });
        if (next) {
          assert.equal(next.epoch, this.published.epoch + 1);
          this.published = next;
        }
      }
    }
  }

  assertNoDoubleWork(): void {
    const holder = new Map<number, string>();
    for (const [id, m] of this.members) {
      for (const s of m.working) {
        assert.ok(m.alive, `${id} is down but works on slot ${s}`);
        assert.equal(holder.get(s), undefined, `slot ${s} worked on by ${holder.get(s)} and ${id}`);
        holder.set(s, id);
      }
    }
  }

  /** Everyone alive applies, then the coordinator advances, until nothing changes. */
  settle(): number {
    for (let round = 1; round <= 10; round++) {
      for (const [id, m] of this.members) {
        if (!m.alive) continue;
        m.working = activeSlotsOf(this.published, id);
        m.acked = this.published.epoch;
      }
      this.assertNoDoubleWork();
      const before = this.published.epoch;
      this.do({ kind: "advance" });
      if (this.published.epoch === before) return round;
    }
    assert.fail("the ring did not settle in 10 rounds");
  }
}

describe("advanceAssignment (two-phase handover)", () => {
  it("grants every slot at once on first start", () => {
    const a = advanceAssignment(emptyAssignment(8), { members: ["a", "b"], acknowledged: () => undefined })!;
    assert.equal(a.epoch, 1);
    assert.equal(a.releasing.size, 0);
    assert.deepEqual([...activeSlotsOf(a, "a")], [0, 1, 2, 3]);
    assert.deepEqual([...activeSlotsOf(a, "b")], [4, 5, 6, 7]);
    assert.equal(advanceAssignment(a, { members: ["a", "b"], acknowledged: () => 1 }), undefined);
  });

  it("moves a slot to a newcomer only after its owner acknowledged the release", () => {
    const e1 = advanceAssignment(emptyAssignment(4), { members: ["a"], acknowledged: () => undefined })!;
    const acks = new Map<string, number>([["a", 1]]);
    const view = { members: ["a", "b"], acknowledged: (m: string) => acks.get(m) };
    const e2 = advanceAssignment(e1, view)!;
    assert.deepEqual([...releasingSlotsOf(e2, "a")], [2, 3], "epoch 2 asks a to release half");
    assert.deepEqual([...activeSlotsOf(e2, "a")], [0, 1]);
    assert.deepEqual([...activeSlotsOf(e2, "b")], [], "b gets nothing yet");
    assert.equal(advanceAssignment(e2, view), undefined, "nothing happens until a acknowledges");
    acks.set("a", 2);
    const e3 = advanceAssignment(e2, view)!;
    assert.deepEqual([...activeSlotsOf(e3, "b")], [2, 3], "epoch 3 grants them to b");
    assert.ok(isSettled(e3));
  });

  it("frees a departed member's slots at once, with no release", () => {
    const e1 = advanceAssignment(emptyAssignment(4), { members: ["a", "b"], acknowledged: () => undefined })!;
    const e2 = advanceAssignment(e1, { members: ["a"], acknowledged: () => 1 })!;
    assert.deepEqual([...activeSlotsOf(e2, "a")], [0, 1, 2, 3]);
    assert.ok(isSettled(e2));
  });

  it("cancels a release whose owner is the target again", () => {
    const e1 = advanceAssignment(emptyAssignment(4), { members: ["a"], acknowledged: () => undefined })!;
    const e2 = advanceAssignment(e1, { members: ["a", "b"], acknowledged: () => 1 })!;
    assert.equal(e2.releasing.size, 2);
    const e3 = advanceAssignment(e2, { members: ["a"], acknowledged: () => 1 })!; // b left before it got anything
    assert.equal(e3.releasing.size, 0);
    assert.deepEqual([...activeSlotsOf(e3, "a")], [0, 1, 2, 3]);
  });

  it("never lets two members work on one slot, and settles balanced, for any interleaving", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(4, 16, 64),
        fc.array(action, { minLength: 1, maxLength: 80 }),
        (slots, actions) => {
          const ring = new Ring(slots);
          for (const a of actions) {
            ring.do(a);
            ring.assertNoDoubleWork();
          }
          // churn stops; crashed members' leases expire
          for (const m of ring.members.values()) if (!m.alive) m.inLease = false;
          ring.settle();
          const alive = [...ring.members].filter(([, m]) => m.alive).map(([id]) => id);
          if (alive.length === 0) return;
          assert.ok(isSettled(ring.published), "settled: every slot owned, nothing releasing");
          const covered = new Set<number>();
          for (const id of alive) {
            const n = ring.members.get(id)!.working.size;
            assert.ok(
              n === Math.floor(slots / alive.length) || n === Math.ceil(slots / alive.length),
              `${id} has ${n}`,
            );
            for (const s of ring.members.get(id)!.working) covered.add(s);
          }
          assert.equal(covered.size, slots, "every slot is worked on by a live member");
        },
      ),
      { numRuns: 300 },
    );
  });

  it("rejects a slot count that is not a power of two", () => {
    assert.throws(() => emptyAssignment(6), SlotCountError);
  });

  it("with more live members than slots, keeps the owners and lets the surplus wait instead of stopping the ring", () => {
    const settle = (a: Assignment, members: string[]) => {
      for (let i = 0; i < 10; i++) {
        const ack = (m: string) => (members.includes(m) ? a.epoch : undefined);
        const next = advanceAssignment(a, { members, acknowledged: ack });
        if (!next) return a;
        a = next;
      }
      throw new Error("did not settle");
    };
    let a = settle(emptyAssignment(4), ["d", "b", "c", "e"]);
    assert.deepEqual([...a.owners].sort(), ["b", "c", "d", "e"]);
    // "a" joins a full ring: it sorts first but owns nothing, so it waits.
    assert.deepEqual(ringParticipants(a, ["a", "b", "c", "d", "e"]), {
      members: ["b", "c", "d", "e"],
      waiting: ["a"],
    });
    assert.equal(
      advanceAssignment(a, { members: ["a", "b", "c", "d", "e"], acknowledged: () => a.epoch }),
      undefined,
    );
    // When an owner leaves, the waiting member takes its slot.
    a = settle(a, ["a", "b", "c", "e"]);
    assert.deepEqual([...a.owners].sort(), ["a", "b", "c", "e"]);
    assert.ok(isSettled(a));
  });
});
