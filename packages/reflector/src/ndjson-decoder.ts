import { StreamDecodeError, type ListWatchErrorContext } from "./list-watch-error.js";

const NEWLINE = 0x0a;
const EXCERPT_CHARS = 200;

/**
 * Splits a stream of newline-delimited JSON, as a watch response is, into
 * parsed values, chunk by chunk as they arrive: only the unfinished last line
 * is held between chunks, so a stream of any length is never buffered whole.
 * Lines are found with `Buffer.indexOf` and each is parsed once, straight
 * from the received bytes.
 *
 * Throws {@link StreamDecodeError} on a line that is not JSON, or on
 * {@link NdjsonDecoder.end} when the stream stopped inside a line.
 */
export class NdjsonDecoder {
  private pending: Buffer[] = [];

  constructor(
    private readonly context: ListWatchErrorContext,
    private readonly onValue: (value: unknown) => void,
  ) {}

  /** Bytes of the unfinished last line held right now. */
  get pendingBytes(): number {
    let n = 0;
    for (const b of this.pending) n += b.length;
    return n;
  }

  /** Feeds the next chunk of the stream; calls `onValue` for each line it completes. */
  write(chunk: Buffer): void {
    let start = 0;
    let nl = chunk.indexOf(NEWLINE, 0);
    if (nl === -1) {
      if (chunk.length > 0) this.pending.push(chunk);
      return;
    }
    if (this.pending.length > 0) {
      this.pending.push(chunk.subarray(0, nl));
      const line = Buffer.concat(this.pending);
      this.pending = [];
      this.parse(line, 0, line.length);
      start = nl + 1;
      nl = chunk.indexOf(NEWLINE, start);
    }
    while (nl !== -1) {
      this.parse(chunk, start, nl);
      start = nl + 1;
      nl = chunk.indexOf(NEWLINE, start);
    }
    if (start < chunk.length) this.pending.push(chunk.subarray(start));
  }

  /** Marks the end of the stream: a final line without a newline is parsed; text cut short throws. */
  end(): void {
    if (this.pending.length === 0) return;
    const rest = Buffer.concat(this.pending);
    this.pending = [];
    this.parse(rest, 0, rest.length);
  }

  private parse(buf: Buffer, start: number, end: number): void {
    // Blank lines (and a CR of a CRLF) carry nothing.
    if (end > start && buf[end - 1] === 0x0d) end--;
    if (end <= start) return;
    const text = buf.toString("utf8", start, end);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      if (text.trim() === "") return;
      throw new StreamDecodeError(
        this.context,
        `undecodable line in the watch stream (${(err as Error).message})`,
        text.slice(0, EXCERPT_CHARS),
        err,
      );
    }
    this.onValue(value);
  }
}
