import { planSlots } from "./slot-planner.js";
import { SlotSpace } from "./slot-space.js";
import { ringParticipants } from "./ring-participants.js";

/**
 * The published state of a ring: who owns each slot, which slots their owner
 * has been asked to release, and an epoch that grows with every change.
 * Immutable; {@link advanceAssignment} makes the next one.
 */
export interface Assignment {
  /** Grows by one with every published change; 0 for the empty assignment. */
  readonly epoch: number;
  /** `owners[i]`: the member that owns slot i, or `undefined`. */
  readonly owners: readonly (string | undefined)[];
  /**
   * Slot -> the epoch at which its owner was asked to release it. The owner
   * still holds the slot (nobody else gets it) but must start no new work on
   * it; once the owner acknowledges that epoch, the slot is freed and granted.
   */
  readonly releasing: ReadonlyMap<number, number>;
}

/** What the coordinator knows about the ring's members when it advances. */
export interface RingView {
  /**
   * The live members that may own slots: holding a member lease that has not
   * expired (plus margin), and not shutting down. An owner missing from this
   * list is gone: its slots are freed at once. A member must stop working
   * (self-fence) before its lease can expire for the coordinator.
   */
  readonly members: readonly string[];
  /** The last epoch a member acknowledged having applied, if any. */
  acknowledged(member: string): number | undefined;
}

/** The assignment before anything is owned: epoch 0, every slot free. */
export function emptyAssignment(slotCount: number): Assignment {
  new SlotSpace(slotCount); // validates the count
  return { epoch: 0, owners: new Array<undefined>(slotCount).fill(undefined), releasing: new Map() };
}

/** The slots `member` may start work on under `assignment`: owned and not being released. */
export function activeSlotsOf(assignment: Assignment, member: string): Set<number> {
  const out = new Set<number>();
  assignment.owners.forEach((o, i) => {
    if (o === member && !assignment.releasing.has(i)) out.add(i);
  });
  return out;
}

/** The slots `member` has been asked to release under `assignment`. */
export function releasingSlotsOf(assignment: Assignment, member: string): Set<number> {
  const out = new Set<number>();
  for (const slot of assignment.releasing.keys()) if (assignment.owners[slot] === member) out.add(slot);
  return out;
}

/** Whether no slot is being released and every slot is owned. */
export function isSettled(assignment: Assignment): boolean {
  return assignment.releasing.size === 0 && assignment.owners.every((o) => o !== undefined);
}

/**
 * One step of the two-phase handover; `undefined` when nothing changes.
 *
 * 1. Slots of owners that are gone are freed; slots whose owner acknowledged
 *    the epoch that asked for their release are freed.
 * 2. The planner ({@link planSlots}) computes the balanced, minimal-move
 *    target from that table for the live members.
 * 3. Free slots are granted to their target owner at once (nobody works on
 *    them). A slot whose live owner differs from its target is marked
 *    releasing at the new epoch, never handed over directly; a releasing
 *    slot whose target is its owner again is no longer released.
 *
 * So a slot moves from A to B in two epochs: e+1 marks it releasing from A,
 * and the first epoch after A acknowledged e+1 grants it to B. Two live
 * members never both hold a slot they may work on, whatever the timing.
 */
export function advanceAssignment(current: Assignment, view: RingView): Assignment | undefined {
  const next = current.epoch + 1;
  const live = new Set(view.members);
  const owners = [...current.owners];
  const releasing = new Map(current.releasing);
  for (let s = 0; s < owners.length; s++) {
    const o = owners[s];
    if (o === undefined) continue;
    const since = releasing.get(s);
    const acked = view.acknowledged(o);
    if (!live.has(o) || (since !== undefined && acked !== undefined && acked >= since)) {
      owners[s] = undefined;
      releasing.delete(s);
    }
  }
  // More members than slots: the surplus waits (see ringParticipants) rather than the ring stopping.
  const target = planSlots(owners, ringParticipants(current, view.members).members).owners;
  for (let s = 0; s < owners.length; s++) {
    if (owners[s] === undefined) owners[s] = target[s];
    else if (target[s] !== owners[s]) {
      if (!releasing.has(s)) releasing.set(s, next);
    } else releasing.delete(s);
  }
  const same =
    releasing.size === current.releasing.size &&
    [...releasing].every(([s, e]) => current.releasing.get(s) === e) &&
    owners.every((o, i) => o === current.owners[i]);
  return same ? undefined : { epoch: next, owners, releasing };
}
