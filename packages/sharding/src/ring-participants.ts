import type { Assignment } from "./assignment.js";

/** Which live members take part in an assignment, and which wait because the ring has too few slots. */
export interface RingParticipants {
  /** At most one member per slot: the ones the planner shares the slots among. */
  readonly members: readonly string[];
  /** Live members left without slots until a participant leaves; empty in a ring with enough slots. */
  readonly waiting: readonly string[];
}

/**
 * Picks the members that share `current`'s slots when there are more live
 * members than slots. Planning for all of them is impossible (some member
 * would own nothing), and refusing to plan would freeze the whole ring, so
 * the members that own slots already keep them and the rest, in identity
 * order, fill what is left; the others wait. Deterministic for the same input.
 */
export function ringParticipants(current: Assignment, members: readonly string[]): RingParticipants {
  const slots = current.owners.length;
  if (members.length <= slots) return { members, waiting: [] };
  const owning = new Set(current.owners.filter((o): o is string => o !== undefined));
  const order = [...members].sort((a, b) => {
    const byOwning = Number(owning.has(b)) - Number(owning.has(a));
    return byOwning !== 0 ? byOwning : a < b ? -1 : a > b ? 1 : 0;
  });
  return { members: order.slice(0, slots), waiting: order.slice(slots) };
}
