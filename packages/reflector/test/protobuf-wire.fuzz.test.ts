import { strict as assert } from "node:assert";
import fc from "fast-check";
import { LengthDelimitedFrames, PROTOBUF_MAGIC, ProtobufCodec, ProtobufDecodeError } from "../src/index.js";
import { fuzz } from "@tessera/core/testing/fuzz";
import { encode, enveloped } from "./support/protobuf-wire.js";

// The protobuf wire is where the API server's bytes enter when a client asks
// for protobuf: frames of a watch stream, then each frame's WatchEvent and
// its enveloped object, or a whole LIST. Whatever the bytes, the codec
// decodes them or throws ProtobufDecodeError (which KubeListerWatcher turns
// into a StreamDecodeError naming resource and verb); never another error.

const codec = new ProtobufCodec();
// The fuzzed objects are ConfigMaps: their API version's messages.
await codec.load("v1");
const META = "k8s.io.apimachinery.pkg.apis.meta.v1";

const watchFrame = (eventType: string, object: Buffer) =>
  encode(`${META}.WatchEvent`, { type: eventType, object: { raw: object } });

/** ConfigMaps with the fields whose JSON form is computed, not copied: times, managed fields' raw JSON. */
const configMap = fc.record({
  metadata: fc.record(
    {
      name: fc.string(),
      namespace: fc.string(),
      resourceVersion: fc.nat().map(String),
      generation: fc.integer(),
      labels: fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 }),
      creationTimestamp: fc.record({
        seconds: fc.oneof(
          fc.integer({ min: 0, max: 4_102_444_800 }),
          fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String),
        ),
        nanos: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
      }),
      managedFields: fc.array(
        fc.record({
          manager: fc.string(),
          operation: fc.constantFrom("Apply", "Update"),
          fieldsType: fc.constant("FieldsV1"),
          fieldsV1: fc.record({
            Raw: fc.oneof(
              fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v))),
              fc.uint8Array({ maxLength: 20 }).map((b) => Buffer.from(b)),
            ),
          }),
        }),
        { maxLength: 2 },
      ),
    },
    { requiredKeys: ["name"] },
  ),
  data: fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 }),
  binaryData: fc.dictionary(
    fc.string(),
    fc.uint8Array({ maxLength: 8 }).map((b) => Buffer.from(b)),
    { maxKeys: 2 },
  ),
});

const configMapBytes = configMap.map((cm) =>
  enveloped("v1", "ConfigMap", "k8s.io.api.core.v1.ConfigMap", cm),
);
const listBytes = fc
  .record({ rv: fc.nat().map(String), cont: fc.string(), items: fc.array(configMap, { maxLength: 3 }) })
  .map(({ rv, cont, items }) =>
    enveloped("v1", "ConfigMapList", "k8s.io.api.core.v1.ConfigMapList", {
      metadata: { resourceVersion: rv, continue: cont },
      items,
    }),
  );
const frameBytes = fc
  .record({ t: fc.constantFrom("ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR", ""), cm: configMapBytes })
  .map(({ t, cm }) => watchFrame(t, cm));

/** A valid encoding damaged: cut short, bytes changed, bytes inserted. */
function mutated(valid: fc.Arbitrary<Buffer>): fc.Arbitrary<Buffer> {
  return fc
    .record({
      bytes: valid,
      cut: fc.option(fc.nat(), { nil: undefined }),
      flips: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }),
      insert: fc.option(fc.tuple(fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 6 })), {
        nil: undefined,
      }),
    })
    .map(({ bytes, cut, flips, insert }) => {
      let b = Buffer.from(bytes);
      if (b.length === 0) return b;
      for (const [at, byte] of flips) b[at % b.length] = byte;
      if (insert) {
        const at = insert[0] % b.length;
        b = Buffer.concat([b.subarray(0, at), Buffer.from(insert[1]), b.subarray(at)]);
      }
      return cut === undefined ? b : b.subarray(0, cut % (b.length + 1));
    });
}

/** Runs `decode` and accepts a result or a ProtobufDecodeError with a message; anything else fails. */
function decodesOrRefuses<R>(decode: () => R): R | undefined {
  try {
    return decode();
  } catch (error) {
    assert.ok(error instanceof ProtobufDecodeError, `not a ProtobufDecodeError: ${String(error)}`);
    assert.ok(error.message.length > 0);
    return undefined;
  }
}

function checkWatchEvent(bytes: Uint8Array): void {
  const event = decodesOrRefuses(() => codec.decodeWatchEvent(bytes));
  if (!event) return;
  assert.ok(typeof event.type === "string" && event.type !== "");
  assert.ok(typeof event.object === "object" && event.object !== null);
  JSON.stringify(event.object); // the shape is plain JSON: no cycles, no BigInt
}

function checkList(bytes: Uint8Array): void {
  const list = decodesOrRefuses(() => codec.decodeList(bytes));
  if (list) assert.ok(Array.isArray(list.items));
}

describe("protobuf wire (fuzz)", () => {
  it("watch frames: arbitrary bytes in arbitrary chunks give the frames they hold, or a ProtobufDecodeError", () => {
    fuzz(
      "protobuf frames: arbitrary bytes",
      fc.record({
        bytes: fc.oneof(
          fc.uint8Array({ maxLength: 200 }),
          fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 5 }).map((payloads) => {
            const parts = payloads.map((p) => {
              const head = Buffer.alloc(4);
              head.writeUInt32BE(p.length);
              return Buffer.concat([head, p]);
            });
            return new Uint8Array(Buffer.concat(parts));
          }),
        ),
        cuts: fc.array(fc.nat(), { maxLength: 6 }),
      }),
      ({ bytes, cuts }) => {
        const buf = Buffer.from(bytes);
        const want: Buffer[] = [];
        let at = 0;
        while (buf.length - at >= 4 && buf.length - at - 4 >= buf.readUInt32BE(at)) {
          want.push(buf.subarray(at + 4, at + 4 + buf.readUInt32BE(at)));
          at += 4 + buf.readUInt32BE(at);
        }
        const got: Buffer[] = [];
        const frames = new LengthDelimitedFrames((f) => got.push(Buffer.from(f)));
        const points = [...new Set(cuts.map((c) => c % (buf.length + 1)))].sort((a, b) => a - b);
        let from = 0;
        let error: unknown;
        try {
          for (const p of [...points, buf.length]) {
            frames.write(buf.subarray(from, p));
            from = p;
          }
          frames.end();
        } catch (e) {
          error = e;
        }
        // Every whole frame arrived, in order, before any error; an error only for bytes left over.
        assert.deepEqual(got, want);
        assert.equal(error !== undefined, at < buf.length);
        if (error !== undefined) assert.ok(error instanceof ProtobufDecodeError, (error as Error).message);
      },
      1500,
    );
  });

  it("decodeWatchEvent: arbitrary bytes", () => {
    fuzz(
      "protobuf decodeWatchEvent: arbitrary bytes",
      fc.uint8Array({ maxLength: 200 }),
      checkWatchEvent,
      2000,
    );
  });

  it("decodeWatchEvent: valid frames with fuzzed fields, and damaged ones", () => {
    fuzz(
      "protobuf decodeWatchEvent: fuzzed and damaged frames",
      fc.oneof(frameBytes, mutated(frameBytes)),
      checkWatchEvent,
      400,
    );
  });

  it("decodeList: arbitrary bytes, magic-prefixed bytes, valid lists with fuzzed fields, and damaged ones", () => {
    fuzz(
      "protobuf decodeList: arbitrary, fuzzed and damaged lists",
      fc.oneof(
        fc.uint8Array({ maxLength: 200 }),
        fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.concat([PROTOBUF_MAGIC, b])),
        listBytes,
        mutated(listBytes),
      ),
      checkList,
      400,
    );
  });
});

// Counterexamples the fuzz targets found (shrunk), kept as examples: bytes that decode as protobuf
// but hold a value with no JSON form used to escape as a RangeError or a SyntaxError.
describe("protobuf wire (found by fuzzing)", () => {
  const refused = (bytes: Uint8Array, why: RegExp) =>
    assert.throws(
      () => codec.decodeObject(bytes),
      (e: unknown) =>
        e instanceof ProtobufDecodeError &&
        /has a value with no JSON form/.test(e.message) &&
        why.test(e.message),
    );

  it("refuses a creationTimestamp past what a Date holds", () => {
    refused(
      enveloped("v1", "ConfigMap", "k8s.io.api.core.v1.ConfigMap", {
        metadata: { name: "a", creationTimestamp: { seconds: "8640000000001" } },
      }),
      /Invalid time value/,
    );
  });

  it("refuses managed fields whose raw bytes are not JSON", () => {
    refused(
      enveloped("v1", "ConfigMap", "k8s.io.api.core.v1.ConfigMap", {
        metadata: { name: "a", managedFields: [{ manager: "m", fieldsV1: { Raw: Buffer.from([0]) } }] },
      }),
      /JSON/,
    );
  });
});
