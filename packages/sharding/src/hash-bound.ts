import { HASH_SPACE } from "./hash-range.js";

/** The only 17-digit bound the server accepts: 2^64, the exclusive top of the space. */
export const TOP_BOUND_LITERAL = "0x10000000000000000";

/**
 * A range bound as the server's grammar spells it: `0x` + exactly 16
 * lowercase hex digits, or `0x10000000000000000` for 2^64.
 *
 * @throws RangeError when `value` is outside [0, 2^64].
 */
export function formatHashBound(value: bigint): string {
  if (value < 0n || value > HASH_SPACE) {
    throw new RangeError(`shard hash bound ${value} is outside [0, 2^64]`);
  }
  if (value === HASH_SPACE) return TOP_BOUND_LITERAL;
  return "0x" + value.toString(16).padStart(16, "0");
}
