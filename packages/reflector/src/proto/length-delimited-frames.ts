import { ProtobufDecodeError } from "./protobuf-codec.js";

/** The largest frame accepted: the API server's own limit on one object is far below it. */
const MAX_FRAME_BYTES = 64 * 1024 * 1024;

/**
 * Splits a protobuf watch stream into its frames as chunks arrive: each
 * frame is a 4-byte big-endian length, then that many bytes. `end` throws a
 * {@link ProtobufDecodeError} when the stream stopped inside a frame.
 */
export class LengthDelimitedFrames {
  private pending: Buffer = Buffer.alloc(0);

  constructor(private readonly onFrame: (frame: Buffer) => void) {}

  write(chunk: Buffer): void {
    let buffer = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    while (buffer.length >= 4) {
      const length = buffer.readUInt32BE(0);
      if (length > MAX_FRAME_BYTES) {
        throw new ProtobufDecodeError(
          `a watch frame says it is ${length} bytes long, past ${MAX_FRAME_BYTES}`,
        );
      }
      if (buffer.length < 4 + length) break;
      const frame = buffer.subarray(4, 4 + length);
      buffer = buffer.subarray(4 + length);
      this.onFrame(frame);
    }
    // Keep only the unread part (copied, so the chunk it came from can go).
    this.pending = buffer.length === 0 ? Buffer.alloc(0) : Buffer.from(buffer);
  }

  end(): void {
    if (this.pending.length > 0) {
      throw new ProtobufDecodeError(
        `the watch stream ended inside a frame (${this.pending.length} bytes left over)`,
      );
    }
  }
}
