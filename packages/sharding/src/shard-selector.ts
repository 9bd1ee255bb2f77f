import { formatHashBound } from "./hash-bound.js";
import { FULL_RANGE, HASH_SPACE, mergeRanges, type HashRange } from "./hash-range.js";
import type { Hash64 } from "./fnv1a64.js";
import { fnv1a64Words } from "./fnv1a64.js";
import {
  DEFAULT_SHARD_FIELD,
  isShardField,
  shardKeyOf,
  type ShardField,
  type ShardKeySource,
} from "./shard-field.js";
import { ShardSelectorError } from "./shard-selector-error.js";
import { parseShardSelector } from "./shard-selector-parser.js";

/**
 * A validated server-side shard selector: one field and one or more hash
 * ranges, matched when any range holds the field's hash. Immutable.
 *
 * ```ts
 * const s = ShardSelector.of("object.metadata.uid", [{ start: 0n, end: 1n << 63n }]);
 * s.toString(); // "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
 * ShardSelector.parse(s.toString()).equals(s); // true
 * ```
 */
export class ShardSelector {
  /** The terms' ranges, in the order given. */
  readonly ranges: readonly HashRange[];
  /** Range bounds as 32-bit halves, [startHi, startLo, endHi, endLo] per range, for matching. */
  private readonly words: Float64Array;

  private constructor(
    readonly field: ShardField,
    ranges: readonly HashRange[],
  ) {
    this.ranges = Object.freeze(ranges.map((r) => Object.freeze({ start: r.start, end: r.end })));
    this.words = new Float64Array(ranges.length * 4);
    ranges.forEach((r, i) => {
      this.words[i * 4] = Number(r.start >> 32n);
      this.words[i * 4 + 1] = Number(r.start & 0xffffffffn);
      this.words[i * 4 + 2] = Number(r.end >> 32n); // 2^32 for the top bound
      this.words[i * 4 + 3] = Number(r.end & 0xffffffffn);
    });
  }

  /**
   * A selector over `field` made of `ranges` (kept in order, not merged).
   *
   * @throws ShardSelectorError if there is no range, the field is not one the
   * server supports, or a range is not 0 <= start < end <= 2^64.
   */
  static of(field: ShardField, ranges: readonly HashRange[]): ShardSelector {
    const rendering = () => `${field}: ${ranges.map((r) => `[${r.start}, ${r.end})`).join(", ")}`;
    if (!isShardField(field)) {
      throw new ShardSelectorError(`unsupported field ${JSON.stringify(field)}`, rendering());
    }
    if (ranges.length === 0) {
      throw new ShardSelectorError("no range (an empty selector is refused by the server)", rendering());
    }
    for (const r of ranges) {
      if (typeof r.start !== "bigint" || typeof r.end !== "bigint") {
        throw new ShardSelectorError("range bounds must be bigint", rendering());
      }
      if (r.start < 0n || r.end > HASH_SPACE) {
        throw new ShardSelectorError(`range [${r.start}, ${r.end}) leaves [0, 2^64)`, rendering());
      }
      if (r.start >= r.end) {
        throw new ShardSelectorError(
          `range start ${formatHashBound(r.start)} is not below end ${formatHashBound(r.end)}`,
          rendering(),
        );
      }
    }
    return new ShardSelector(field, ranges);
  }

  /** The selector that matches every object: [0, 2^64) on `field`. */
  static everything(field: ShardField = DEFAULT_SHARD_FIELD): ShardSelector {
    return new ShardSelector(field, [FULL_RANGE]);
  }

  /**
   * Parses `text` in the server's grammar.
   *
   * @throws ShardSelectorError naming the problem, its position and the accepted forms.
   */
  static parse(text: string): ShardSelector {
    const parsed = parseShardSelector(text);
    return new ShardSelector(parsed.field, parsed.ranges);
  }

  /**
   * The same set of hashes with the fewest terms: ranges sorted by start,
   * overlapping and adjacent ones merged. Two selectors match the same
   * objects exactly when their canonical forms are equal.
   */
  canonical(): ShardSelector {
    return new ShardSelector(this.field, mergeRanges(this.ranges));
  }

  /** Whether the 64-bit `hash` falls in one of the ranges. */
  matchesHash(hash: Hash64): boolean {
    const w = this.words;
    const { hi, lo } = hash;
    for (let i = 0; i < w.length; i += 4) {
      const sHi = w[i]!;
      const eHi = w[i + 2]!;
      if ((hi > sHi || (hi === sHi && lo >= w[i + 1]!)) && (hi < eHi || (hi === eHi && lo < w[i + 3]!))) {
        return true;
      }
    }
    return false;
  }

  /** Whether the 64-bit `hash`, as a bigint, falls in one of the ranges. */
  matchesBigInt(hash: bigint): boolean {
    return this.matchesHash({ hi: Number(hash >> 32n), lo: Number(hash & 0xffffffffn) });
  }

  /** Whether the server would send an object whose shard key (UID or namespace) is `value`. */
  matchesKey(value: string): boolean {
    return this.matchesHash(fnv1a64Words(value));
  }

  /** Whether the server would send `object` for this selector. */
  matchesObject(object: ShardKeySource): boolean {
    return this.matchesKey(shardKeyOf(object, this.field));
  }

  /** Whether both select the same field and the same set of hashes. */
  equivalent(other: ShardSelector): boolean {
    return this.canonical().equals(other.canonical());
  }

  /** Whether both have the same field and the same terms in the same order. */
  equals(other: ShardSelector): boolean {
    return (
      this.field === other.field &&
      this.ranges.length === other.ranges.length &&
      this.ranges.every((r, i) => r.start === other.ranges[i]!.start && r.end === other.ranges[i]!.end)
    );
  }

  /** The wire form, exactly as the server re-serializes it (`metadata.shardInfo.selector`). */
  toString(): string {
    return this.ranges
      .map((r) => `shardRange(${this.field}, '${formatHashBound(r.start)}', '${formatHashBound(r.end)}')`)
      .join(" || ");
  }

  /** The wire form, so a selector serializes to JSON as its text. */
  toJSON(): string {
    return this.toString();
  }
}
