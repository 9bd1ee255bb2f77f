/** Strings longer than this many bytes are decoded each time, never kept. */
const MAX_KEPT_BYTES = 64;

/**
 * The strings of a field that takes a few values over a whole stream (a
 * watch event's type, an object's apiVersion and kind): each is decoded from
 * its bytes once, and the same bytes later give the same string, so that a
 * frame allocates none for them and every cached object holds one shared
 * copy. Keeps the first `capacity` values it meets; others are decoded every
 * time.
 */
export class RepeatedStrings {
  private readonly bytes: Buffer[] = [];
  private readonly texts: string[] = [];

  constructor(private readonly capacity = 8) {}

  /** The UTF-8 string of `buf`'s bytes `from` to `to`. */
  at(buf: Buffer, from: number, to: number): string {
    const length = to - from;
    for (let i = 0; i < this.bytes.length; i++) {
      const known = this.bytes[i] as Buffer;
      if (known.length === length && sameBytes(known, buf, from)) return this.texts[i] as string;
    }
    const text = buf.toString("utf8", from, to);
    if (length <= MAX_KEPT_BYTES && this.bytes.length < this.capacity) {
      this.bytes.push(Buffer.from(buf.subarray(from, to)));
      this.texts.push(text);
    }
    return text;
  }
}

/** Whether `buf` holds `known`'s bytes from `from` on (a loop: they are a few bytes long). */
function sameBytes(known: Buffer, buf: Buffer, from: number): boolean {
  for (let i = 0; i < known.length; i++) if (known[i] !== buf[from + i]) return false;
  return true;
}
