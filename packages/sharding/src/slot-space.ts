import type { Hash64 } from "./fnv1a64.js";
import { fnv1a64Words } from "./fnv1a64.js";
import { HASH_SPACE, type HashRange } from "./hash-range.js";
import type { ShardField } from "./shard-field.js";
import { ShardSelector } from "./shard-selector.js";

/** The default number of slots in a ring. */
export const DEFAULT_SLOT_COUNT = 256;
/** The largest slot count accepted. */
export const MAX_SLOT_COUNT = 65536;

/** Raised for a slot count that is not a power of two in [1, 65536], or smaller than the member count. */
export class SlotCountError extends Error {
  override name = "SlotCountError";
  constructor(
    readonly slotCount: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The hash space cut into S equal slots, S a power of two: slot i covers
 * [i * 2^64 / S, (i+1) * 2^64 / S), so a hash's slot is its top log2(S) bits.
 */
export class SlotSpace {
  /** log2 of the slot count. */
  readonly bits: number;
  private readonly width: bigint;

  /**
   * @param slotCount the number of slots, a power of two from 1 to 65536 (default 256)
   * @throws SlotCountError otherwise
   */
  constructor(readonly slotCount: number = DEFAULT_SLOT_COUNT) {
    if (
      !Number.isInteger(slotCount) ||
      slotCount < 1 ||
      slotCount > MAX_SLOT_COUNT ||
      (slotCount & (slotCount - 1)) !== 0
    ) {
      throw new SlotCountError(
        slotCount,
        `slot count ${slotCount} is not allowed: it must be a power of two from 1 to ${MAX_SLOT_COUNT} ` +
          `(e.g. 64, 256 (the default), 1024) so that every slot is an exact hash range`,
      );
    }
    this.bits = Math.log2(slotCount);
    this.width = HASH_SPACE / BigInt(slotCount);
  }

  /**
   * Checks that `memberCount` members can each own at least one slot.
   *
   * @throws SlotCountError when there are more members than slots
   */
  assertFits(memberCount: number): void {
    if (memberCount > this.slotCount) {
      throw new SlotCountError(
        this.slotCount,
        `slot count ${this.slotCount} is smaller than the ${memberCount} members: every member must be able to ` +
          `own a slot, so use a power of two of at least ${2 ** Math.ceil(Math.log2(memberCount))} slots`,
      );
    }
  }

  /** The slot holding a 64-bit hash. */
  slotOfHash(hash: Hash64): number {
    return this.bits === 0 ? 0 : hash.hi >>> (32 - this.bits);
  }

  /** The slot holding the hash of a shard key (a UID or namespace name). */
  slotOfKey(value: string): number {
    return this.slotOfHash(fnv1a64Words(value));
  }

  /** The hash range slot `slot` covers. */
  rangeOf(slot: number): HashRange {
    this.checkSlot(slot);
    const start = BigInt(slot) * this.width;
    return { start, end: start + this.width };
  }

  /** The ranges covered by `slots`, adjacent slots merged, in order. Duplicates are ignored. */
  rangesOf(slots: Iterable<number>): HashRange[] {
    const sorted = [...new Set(slots)].sort((a, b) => a - b);
    const out: HashRange[] = [];
    let runStart = -1;
    let prev = -2;
    for (const s of sorted) {
      this.checkSlot(s);
      if (s !== prev + 1) {
        if (runStart >= 0) out.push(this.runRange(runStart, prev));
        runStart = s;
      }
      prev = s;
    }
    if (runStart >= 0) out.push(this.runRange(runStart, prev));
    return out;
  }

  /**
   * The server-side selector for `slots` on `field`: one term per run of
   * adjacent slots.
   *
   * @throws ShardSelectorError when `slots` is empty (the server refuses an empty selector)
   */
  selectorFor(field: ShardField, slots: Iterable<number>): ShardSelector {
    return ShardSelector.of(field, this.rangesOf(slots));
  }

  private runRange(first: number, last: number): HashRange {
    return { start: BigInt(first) * this.width, end: BigInt(last + 1) * this.width };
  }

  private checkSlot(slot: number): void {
    if (!Number.isInteger(slot) || slot < 0 || slot >= this.slotCount) {
      throw new RangeError(`slot ${slot} is outside [0, ${this.slotCount})`);
    }
  }
}
