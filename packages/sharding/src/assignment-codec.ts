import type { Assignment } from "./assignment.js";
import { SlotSpace } from "./slot-space.js";

/** The string map an {@link Assignment} is published as (a ConfigMap's `data`). */
export type EncodedAssignment = Record<string, string>;

/** Raised when published data is not a valid assignment. */
export class AssignmentFormatError extends Error {
  override name = "AssignmentFormatError";
  constructor(
    readonly resource: string,
    problem: string,
  ) {
    super(`${resource} does not hold a valid shard assignment: ${problem}`);
  }
}

/**
 * Encodes an assignment compactly: `epoch`, `slotCount`, `owners` as JSON runs
 * `[start, end, member|null]` and `releasing` as JSON runs `[start, end, sinceEpoch]`
 * (end exclusive).
 */
export function encodeAssignment(assignment: Assignment): EncodedAssignment {
  const owners: [number, number, string | null][] = [];
  assignment.owners.forEach((o, i) => {
    const last = owners[owners.length - 1];
    if (last && last[2] === (o ?? null) && last[1] === i) last[1] = i + 1;
    else owners.push([i, i + 1, o ?? null]);
  });
  const releasing: [number, number, number][] = [];
  for (const [slot, since] of [...assignment.releasing].sort((a, b) => a[0] - b[0])) {
    const last = releasing[releasing.length - 1];
    if (last && last[1] === slot && last[2] === since) last[1] = slot + 1;
    else releasing.push([slot, slot + 1, since]);
  }
  return {
    epoch: String(assignment.epoch),
    slotCount: String(assignment.owners.length),
    owners: JSON.stringify(owners),
    releasing: JSON.stringify(releasing),
  };
}

/**
 * Decodes {@link encodeAssignment}'s output, checking every field.
 *
 * @param resource names the source in errors, e.g. `ConfigMap ns/ring-assignment`
 * @throws AssignmentFormatError naming the resource and the problem
 */
export function decodeAssignment(
  data: Readonly<Record<string, string>> | undefined,
  resource: string,
): Assignment {
  const fail = (problem: string): never => {
    throw new AssignmentFormatError(resource, problem);
  };
  if (!data) fail("no data");
  const epoch = wholeNumber(data!.epoch);
  if (!Number.isSafeInteger(epoch)) fail(`epoch ${JSON.stringify(data!.epoch)} is not a whole number`);
  const slotCount = wholeNumber(data!.slotCount);
  if (!Number.isSafeInteger(slotCount))
    fail(`slotCount ${JSON.stringify(data!.slotCount)} is not a whole number`);
  try {
    new SlotSpace(slotCount);
  } catch (e) {
    fail(`slotCount: ${(e as Error).message}`);
  }
  const parse = (key: string): unknown => {
    try {
      return JSON.parse(data![key] ?? "");
    } catch {
      return fail(`${key} is not JSON`);
    }
  };
  const owners = new Array<string | undefined>(slotCount).fill(undefined);
  const seen = new Array<boolean>(slotCount).fill(false);
  const runs = parse("owners");
  if (!Array.isArray(runs)) fail("owners is not a list of runs");
  for (const run of runs as unknown[]) {
    const [start, end, owner] = checkRun(run, slotCount, "owners", fail);
    if (owner !== null && (typeof owner !== "string" || owner === ""))
      fail(`owners run ${JSON.stringify(run)} has a bad owner`);
    for (let i = start; i < end; i++) {
      if (seen[i]) fail(`slot ${i} appears twice in owners`);
      seen[i] = true;
      owners[i] = (owner as string | null) ?? undefined;
    }
  }
  if (seen.includes(false)) fail(`slot ${seen.indexOf(false)} is missing from owners`);
  const releasing = new Map<number, number>();
  const rel = parse("releasing");
  if (!Array.isArray(rel)) fail("releasing is not a list of runs");
  for (const run of rel as unknown[]) {
    const [start, end, since] = checkRun(run, slotCount, "releasing", fail);
    if (!Number.isSafeInteger(since) || (since as number) < 1 || (since as number) > epoch) {
      fail(`releasing run ${JSON.stringify(run)} has a bad epoch`);
    }
    for (let i = start; i < end; i++) {
      if (owners[i] === undefined) fail(`slot ${i} is releasing but has no owner`);
      releasing.set(i, since as number);
    }
  }
  return { epoch, owners, releasing };
}

/**
 * A number as {@link encodeAssignment} writes it (decimal digits, no sign, no
 * leading zero), else NaN. `Number()` alone would read an emptied field as 0
 * and "1e3" or "0x10" as other numbers: an epoch read lower than the one
 * published makes every member ignore the assignments that follow.
 */
function wholeNumber(text: unknown): number {
  return typeof text === "string" && /^(0|[1-9][0-9]*)$/.test(text) ? Number(text) : Number.NaN;
}

function checkRun(
  run: unknown,
  slotCount: number,
  key: string,
  fail: (problem: string) => never,
): [number, number, unknown] {
  if (!Array.isArray(run) || run.length !== 3)
    return fail(`${key} run ${JSON.stringify(run)} is not [start, end, value]`);
  const [start, end, value] = run as [unknown, unknown, unknown];
  if (
    !Number.isInteger(start) ||
    !Number.isInteger(end) ||
    (start as number) < 0 ||
    (end as number) > slotCount ||
    (start as number) >= (end as number)
  ) {
    return fail(`${key} run ${JSON.stringify(run)} is not a slot range within [0, ${slotCount})`);
  }
  return [start as number, end as number, value];
}
