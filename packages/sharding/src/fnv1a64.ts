/**
 * 64-bit FNV-1a over the UTF-8 bytes of a string, computed the way the API
 * server computes the shard hash of `metadata.uid` or `metadata.namespace`
 * (KEP-5866; Go's `hash/fnv` New64a): offset basis 0xcbf29ce484222325,
 * prime 0x100000001b3, XOR each byte in and then multiply, modulo 2^64.
 *
 * The state is four 16-bit limbs held in small integers, so no BigInt and no
 * float arithmetic happens per byte. Multiplying by the prime 2^40 + 0x1b3 is
 * `h * 0x1b3` (each limb times 0x1b3 plus the carry stays below 2^26) plus
 * `h << 40`, which adds limb 0 shifted by 8 into limb 2 and limb 1 shifted by
 * 8 into limb 3 (the rest falls off the top).
 */

/** A 64-bit hash as two unsigned 32-bit halves: `hi * 2^32 + lo`. */
export interface Hash64 {
  /** Upper 32 bits, 0 <= hi < 2^32. */
  readonly hi: number;
  /** Lower 32 bits, 0 <= lo < 2^32. */
  readonly lo: number;
}

/**
 * The FNV-1a 64 hash of `value`'s UTF-8 encoding as two 32-bit halves.
 * Lone UTF-16 surrogates are encoded as U+FFFD, as `TextEncoder` and Go's JSON
 * decoder do.
 */
export function fnv1a64Words(value: string): Hash64 {
  let h0 = 0x2325;
  let h1 = 0x8422;
  let h2 = 0x9ce4;
  let h3 = 0xcbf2;
  const n = value.length;
  let i = 0;
  // Fast path: one byte per UTF-16 unit while the text is ASCII (UIDs and
  // namespace names always are).
  for (; i < n; i++) {
    const c = value.charCodeAt(i);
    if (c >= 0x80) break;
    h0 ^= c;
    const t0 = h0 * 0x1b3;
    const t1 = h1 * 0x1b3 + (t0 >>> 16);
    const t2 = h2 * 0x1b3 + (h0 << 8) + (t1 >>> 16);
    const t3 = h3 * 0x1b3 + (h1 << 8) + (t2 >>> 16);
    h0 = t0 & 0xffff;
    h1 = t1 & 0xffff;
    h2 = t2 & 0xffff;
    h3 = t3 & 0xffff;
  }
  if (i < n) {
    for (const b of new TextEncoder().encode(value.slice(i))) {
      h0 ^= b;
      const t0 = h0 * 0x1b3;
      const t1 = h1 * 0x1b3 + (t0 >>> 16);
      const t2 = h2 * 0x1b3 + (h0 << 8) + (t1 >>> 16);
      const t3 = h3 * 0x1b3 + (h1 << 8) + (t2 >>> 16);
      h0 = t0 & 0xffff;
      h1 = t1 & 0xffff;
      h2 = t2 & 0xffff;
      h3 = t3 & 0xffff;
    }
  }
  return { hi: h3 * 0x10000 + h2, lo: h1 * 0x10000 + h0 };
}

/** The FNV-1a 64 hash of `value`'s UTF-8 encoding as a BigInt in [0, 2^64). */
export function fnv1a64(value: string): bigint {
  const { hi, lo } = fnv1a64Words(value);
  return (BigInt(hi) << 32n) | BigInt(lo);
}

/** The FNV-1a 64 hash of `value` as 16 lowercase hex digits, like the server's `HashField`. */
export function fnv1a64Hex(value: string): string {
  const { hi, lo } = fnv1a64Words(value);
  return hi.toString(16).padStart(8, "0") + lo.toString(16).padStart(8, "0");
}
