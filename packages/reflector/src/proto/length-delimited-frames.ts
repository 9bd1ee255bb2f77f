import { ProtobufDecodeError } from "./protobuf-codec.js";

/** The largest frame accepted: the API server's own limit on one object is far below it. */
const MAX_FRAME_BYTES = 64 * 1024 * 1024;

/** Bytes of a frame's length prefix. */
const PREFIX = 4;

/** The reused buffer of split frames grows up to this; a larger frame has a buffer of its own. */
const MAX_KEPT_BYTES = 1024 * 1024;

/**
 * Splits a protobuf watch stream into its frames as chunks arrive: each
 * frame is a 4-byte big-endian length, then that many bytes. `end` throws a
 * {@link ProtobufDecodeError} when the stream stopped inside a frame.
 *
 * A frame that lies whole in one chunk is handed out as a view of that
 * chunk; only a frame split across chunks is copied, once, into a buffer
 * reused from one such frame to the next (the API server flushes about one
 * event per write, so many frames straddle two chunks: copying every chunk's
 * rest into the next copied the stream, and a buffer per frame cost an
 * allocation outside the heap per Pod). So a frame is valid until `onFrame`
 * returns: copy it to keep it.
 */
export class LengthDelimitedFrames {
  /** The frame begun in an earlier chunk (its length known), or its length prefix while that is cut. */
  private partial: Buffer | undefined;
  /** The reused buffer of frames split across chunks (up to {@link MAX_KEPT_BYTES}). */
  private scratch: Buffer = Buffer.alloc(0);
  /** Bytes of `partial` filled so far. */
  private filled = 0;
  /** Whether `partial` holds the length prefix, not the frame. */
  private inPrefix = false;

  constructor(private readonly onFrame: (frame: Buffer) => void) {}

  write(chunk: Buffer): void {
    let at = 0;
    if (this.partial !== undefined) {
      at = this.fill(chunk);
      if (this.partial !== undefined) return; // the chunk went into the partial frame, which needs more
    }
    while (chunk.length - at >= PREFIX) {
      const length = frameLength(chunk, at);
      const start = at + PREFIX;
      if (chunk.length - start < length) break;
      at = start + length;
      this.onFrame(chunk.subarray(start, at));
    }
    if (at < chunk.length) this.begin(chunk, at);
  }

  end(): void {
    if (this.partial !== undefined) {
      throw new ProtobufDecodeError(
        `the watch stream ended inside a frame (${this.filled + (this.inPrefix ? 0 : PREFIX)} bytes left over)`,
      );
    }
  }

  /** Keeps the rest of `chunk` from `at` (less than a whole frame) as the start of a partial frame. */
  private begin(chunk: Buffer, at: number): void {
    if (chunk.length - at < PREFIX) {
      this.partial = Buffer.alloc(PREFIX);
      this.inPrefix = true;
      this.filled = chunk.copy(this.partial, 0, at);
      return;
    }
    this.partial = this.frameBuffer(frameLength(chunk, at));
    this.inPrefix = false;
    this.filled = chunk.copy(this.partial, 0, at + PREFIX);
  }

  /** A buffer of `length` bytes for a split frame: a view of the scratch buffer, grown to hold it. */
  private frameBuffer(length: number): Buffer {
    if (length > MAX_KEPT_BYTES) return Buffer.allocUnsafe(length);
    if (this.scratch.length < length) {
      this.scratch = Buffer.allocUnsafe(Math.min(MAX_KEPT_BYTES, Math.max(length, 2 * this.scratch.length)));
    }
    return this.scratch.subarray(0, length);
  }

  /**
   * Copies what the partial frame lacks from the start of `chunk`, hands it
   * out when whole, and returns how many of the chunk's bytes it took.
   */
  private fill(chunk: Buffer): number {
    let at = 0;
    if (this.inPrefix) {
      const prefix = this.partial as Buffer;
      const taken = chunk.copy(prefix, this.filled, 0, PREFIX - this.filled);
      this.filled += taken;
      at = taken;
      if (this.filled < PREFIX) return at;
      this.partial = this.frameBuffer(frameLength(prefix, 0));
      this.inPrefix = false;
      this.filled = 0;
    }
    const frame = this.partial as Buffer;
    const taken = chunk.copy(frame, this.filled, at, at + frame.length - this.filled);
    this.filled += taken;
    at += taken;
    if (this.filled < frame.length) return at;
    this.partial = undefined;
    this.filled = 0;
    this.onFrame(frame);
    return at;
  }
}

/** The length a frame's prefix at `at` gives, refused past {@link MAX_FRAME_BYTES}. */
function frameLength(buf: Buffer, at: number): number {
  const length = buf.readUInt32BE(at);
  if (length > MAX_FRAME_BYTES) {
    throw new ProtobufDecodeError(`a watch frame says it is ${length} bytes long, past ${MAX_FRAME_BYTES}`);
  }
  return length;
}
