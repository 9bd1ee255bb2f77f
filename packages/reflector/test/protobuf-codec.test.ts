import { strict as assert } from "node:assert";
import {
  formatGoDuration,
  LengthDelimitedFrames,
  PROTOBUF_MAGIC,
  ProtobufCodec,
  ProtobufDecodeError,
} from "../src/index.js";

const frame = (payload: Buffer) => {
  const header = Buffer.alloc(4);
  header.writeUInt32BE(payload.length);
  return Buffer.concat([header, payload]);
};

describe("LengthDelimitedFrames (the protobuf watch stream's framing)", () => {
  it("yields each frame however the chunks split it", () => {
    const payloads = [Buffer.from("a"), Buffer.alloc(0), Buffer.from("hello, world"), Buffer.alloc(300, 9)];
    const stream = Buffer.concat(payloads.map(frame));
    for (const size of [1, 3, 7, stream.length]) {
      const got: Buffer[] = [];
      const frames = new LengthDelimitedFrames((f) => got.push(Buffer.from(f)));
      for (let i = 0; i < stream.length; i += size) frames.write(stream.subarray(i, i + size));
      frames.end();
      assert.deepEqual(got, payloads, `chunks of ${size}`);
    }
  });

  it("says the stream ended inside a frame", () => {
    const frames = new LengthDelimitedFrames(() => {});
    frames.write(frame(Buffer.from("whole")).subarray(0, 6));
    assert.throws(
      () => frames.end(),
      (e: unknown) => e instanceof ProtobufDecodeError && /inside a frame/.test(e.message),
    );
  });

  it("refuses a frame that claims an absurd length", () => {
    const frames = new LengthDelimitedFrames(() => {});
    assert.throws(
      () => frames.write(Buffer.from([0xff, 0xff, 0xff, 0xff, 1])),
      (e: unknown) => e instanceof ProtobufDecodeError && /bytes long/.test(e.message),
    );
  });
});

describe("ProtobufCodec", () => {
  const codec = new ProtobufCodec();

  it("refuses bytes without the Kubernetes magic, saying what they open with", () => {
    assert.throws(
      () => codec.decodeObject(Buffer.from('{"kind":"ConfigMap"}')),
      (e: unknown) => e instanceof ProtobufDecodeError && /7b226b69, not 6b387300/.test(e.message),
    );
  });

  it("refuses a truncated object and a kind it does not know", () => {
    assert.throws(
      () => codec.decodeObject(Buffer.concat([PROTOBUF_MAGIC, Buffer.from([0x0a, 0x50, 0x01])])),
      (e: unknown) => e instanceof ProtobufDecodeError && /could not be decoded/.test(e.message),
    );
    assert.equal(codec.messageFor("v1", "ConfigMap"), "k8s.io.api.core.v1.ConfigMap");
    assert.equal(codec.messageFor("example.com/v1", "Widget"), undefined);
  });

  it("formats durations as Go does", () => {
    assert.equal(formatGoDuration(0), "0s");
    assert.equal(formatGoDuration(1_500_000_000), "1.5s");
    assert.equal(formatGoDuration(3_723_000_000_000), "1h2m3s");
    assert.equal(formatGoDuration(150_000_000), "150ms");
    assert.equal(formatGoDuration(60_000_000_000), "1m0s");
  });
});
