import { SlotSpace } from "./slot-space.js";

/**
 * Who owns each slot: `owners[i]` is the identity of slot i's member, or
 * `undefined` for a slot nobody owns.
 */
export type SlotOwners = readonly (string | undefined)[];

/** The outcome of {@link planSlots}. */
export interface SlotPlan {
  /** The next owner of every slot; every slot is owned when there is at least one member. */
  readonly owners: readonly (string | undefined)[];
  /** How many slots changed owner (including slots that had none or a departed owner). */
  readonly moved: number;
  /** Slot count per member, for every member given. */
  readonly counts: ReadonlyMap<string, number>;
}

interface Run {
  owner: string | undefined;
  start: number;
  end: number; // exclusive
}

/**
 * Plans the next slot table for the live `members` from the `current` one.
 *
 * - Every slot ends up owned by exactly one member (none when `members` is empty).
 * - Balance: every member owns floor(S/N) or ceil(S/N) slots; the larger share
 *   goes to the members that own the most already, so it moves nothing.
 * - Minimal movement: only slots of departed owners, unowned slots and each
 *   member's excess over its share change owner; no slot moves twice.
 * - Contiguity: moves happen at the edges of runs, preferring a donor run next
 *   to a receiver's run (the receiver's range just grows), then free slots next
 *   to a receiver, then donor edges next to free slots, then the meeting point
 *   of two donors (both give up the slots on either side, one piece for the
 *   receiver), so ranges stay few and donors' runs are never split.
 * - Deterministic: the same table and the same set of members (in any order)
 *   give the same plan.
 *
 * @throws SlotCountError if the table's length is not a power of two in
 * [1, 65536] or is smaller than the member count
 * @throws Error if a member identity is empty or repeated
 */
export function planSlots(current: SlotOwners, members: readonly string[]): SlotPlan {
  const space = new SlotSpace(current.length);
  const sorted = [...members].sort(compareIds);
  for (let i = 0; i < sorted.length; i++) {
    if (sorted[i] === "") throw new Error("planSlots: a member identity is empty");
    if (i > 0 && sorted[i] === sorted[i - 1])
      throw new Error(`planSlots: member ${sorted[i]} is listed twice`);
  }
  space.assertFits(sorted.length);
  const S = current.length;
  const live = new Set(sorted);
  const owners: (string | undefined)[] = current.map((o) => (o !== undefined && live.has(o) ? o : undefined));
  const counts = new Map<string, number>(sorted.map((m) => [m, 0]));
  for (const o of owners) if (o !== undefined) counts.set(o, counts.get(o)! + 1);

  if (sorted.length === 0) return { owners, moved: countMoved(current, owners), counts };

  // Shares: the members that own the most get the larger ones.
  const base = Math.floor(S / sorted.length);
  const larger = S % sorted.length;
  const byHolding = [...sorted].sort((a, b) => counts.get(b)! - counts.get(a)! || compareIds(a, b));
  const quota = new Map<string, number>(); // > 0: slots to give away; < 0: slots to receive
  byHolding.forEach((m, rank) => quota.set(m, counts.get(m)! - (base + (rank < larger ? 1 : 0))));

  const gives = (o: string | undefined) => o !== undefined && quota.get(o)! > 0;
  const takes = (o: string | undefined) => o !== undefined && quota.get(o)! < 0;
  const assign = (from: number, to: number, owner: string | undefined) => {
    for (let i = from; i < to; i++) {
      const prev = owners[i];
      if (prev !== undefined) quota.set(prev, quota.get(prev)! - 1);
      if (owner !== undefined) quota.set(owner, quota.get(owner)! + 1);
      owners[i] = owner;
    }
  };
  const need = (o: string) => -quota.get(o)!;

  for (;;) {
    const runs = runsOf(owners);
    if (
      transferAlongEdge(
        runs,
        gives,
        takes,
        (donor, receiver) => Math.min(quota.get(donor!)!, need(receiver!)),
        assign,
      )
    )
      continue;
    if (
      transferAlongEdge(
        runs,
        (o) => o === undefined,
        takes,
        (_f, receiver) => need(receiver!),
        assign,
      )
    )
      continue;
    if (
      transferAlongEdge(
        runs,
        gives,
        (o) => o === undefined,
        (donor) => quota.get(donor!)!,
        assign,
      )
    )
      continue;

    const free = runs.filter((r) => r.owner === undefined);
    const receivers = sorted.filter((m) => quota.get(m)! < 0);
    if (free.length > 0 && receivers.length > 0) {
      // The neediest receiver takes the smallest free run that satisfies it, else the largest.
      const r = receivers.sort((a, b) => need(b) - need(a) || compareIds(a, b))[0]!;
      const fits = free.filter((f) => f.end - f.start >= need(r));
      const pick =
        fits.length > 0 ? minBy(fits, (f) => f.end - f.start) : maxBy(free, (f) => f.end - f.start);
      assign(pick.start, pick.start + Math.min(need(r), pick.end - pick.start), r);
      continue;
    }
    const donors = sorted.filter((m) => quota.get(m)! > 0);
    if (donors.length > 0) {
      // No free slot touches a donor. Open one where two donors meet, so that
      // the next round frees the other side too and the receiver gets one
      // piece from both; else free the largest donor's largest run that fits
      // its quota whole, or the tail of its longest run.
      const meeting = runs.findIndex(
        (r, i) => i + 1 < runs.length && gives(r.owner) && gives(runs[i + 1]!.owner),
      );
      if (meeting >= 0) {
        const run = runs[meeting]!;
        const k = Math.min(quota.get(run.owner!)!, run.end - run.start);
        assign(run.end - k, run.end, undefined);
        continue;
      }
      // A whole run that fits the quota goes first (the donor loses a range).
      const d = donors.sort((a, b) => quota.get(b)! - quota.get(a)! || compareIds(a, b))[0]!;
      const own = runs.filter((x) => x.owner === d);
      const whole = own.filter((x) => x.end - x.start <= quota.get(d)!);
      const run =
        whole.length > 0 ? maxBy(whole, (x) => x.end - x.start) : maxBy(own, (x) => x.end - x.start);
      const k = Math.min(quota.get(d)!, run.end - run.start);
      assign(run.end - k, run.end, undefined);
      continue;
    }
    break;
  }
  for (const m of sorted) counts.set(m, 0);
  for (const o of owners) if (o !== undefined) counts.set(o, counts.get(o)! + 1);
  return { owners, moved: countMoved(current, owners), counts };
}

/**
 * Finds the first pair of adjacent runs (in slot order) whose owners satisfy
 * `from` and `to`, and moves up to `limit` slots at their shared edge from
 * the first to the second. Returns whether anything moved.
 */
function transferAlongEdge(
  runs: readonly Run[],
  from: (owner: string | undefined) => boolean,
  to: (owner: string | undefined) => boolean,
  limit: (fromOwner: string | undefined, toOwner: string | undefined) => number,
  assign: (start: number, end: number, owner: string | undefined) => void,
): boolean {
  for (let i = 0; i + 1 < runs.length; i++) {
    const a = runs[i]!;
    const b = runs[i + 1]!;
    if (from(a.owner) && to(b.owner)) {
      const k = Math.min(limit(a.owner, b.owner), a.end - a.start);
      assign(a.end - k, a.end, b.owner);
      return true;
    }
    if (from(b.owner) && to(a.owner)) {
      const k = Math.min(limit(b.owner, a.owner), b.end - b.start);
      assign(b.start, b.start + k, a.owner);
      return true;
    }
  }
  return false;
}

function runsOf(owners: readonly (string | undefined)[]): Run[] {
  const runs: Run[] = [];
  for (let i = 0; i < owners.length; i++) {
    const last = runs[runs.length - 1];
    if (last && last.owner === owners[i]) last.end = i + 1;
    else runs.push({ owner: owners[i], start: i, end: i + 1 });
  }
  return runs;
}

function countMoved(before: SlotOwners, after: SlotOwners): number {
  let moved = 0;
  for (let i = 0; i < after.length; i++) if (before[i] !== after[i]) moved++;
  return moved;
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function minBy<T>(xs: readonly T[], key: (x: T) => number): T {
  return xs.reduce((best, x) => (key(x) < key(best) ? x : best));
}

function maxBy<T>(xs: readonly T[], key: (x: T) => number): T {
  return xs.reduce((best, x) => (key(x) > key(best) ? x : best));
}
