import { strict as assert } from "node:assert";
import fc from "fast-check";
import { NdjsonDecoder, StreamDecodeError } from "../src/index.js";

const ctx = { resource: "configmaps", verb: "watch" as const };

function decodeChunks(chunks: Buffer[]): unknown[] {
  const out: unknown[] = [];
  const d = new NdjsonDecoder(ctx, (v) => out.push(v));
  for (const c of chunks) d.write(c);
  d.end();
  return out;
}

function split(buf: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (buf.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let at = 0;
  for (const p of points) {
    chunks.push(buf.subarray(at, p));
    at = p;
  }
  chunks.push(buf.subarray(at));
  return chunks;
}

describe("NdjsonDecoder", () => {
  it("yields the same values however the stream is cut into chunks (multi-byte characters included)", () => {
    const value = fc.record({
      type: fc.constantFrom("ADDED", "MODIFIED", "DELETED", "BOOKMARK"),
      object: fc.record({
        metadata: fc.record({ name: fc.string({ unit: "grapheme" }) }),
        data: fc.dictionary(fc.string(), fc.string({ unit: "grapheme" })),
      }),
    });
    fc.assert(
      fc.property(
        fc.array(value, { maxLength: 20 }),
        fc.array(fc.nat(), { maxLength: 30 }),
        (values, cuts) => {
          const text = values.map((v) => JSON.stringify(v) + "\n").join("");
          assert.deepEqual(
            decodeChunks(split(Buffer.from(text, "utf8"), cuts)),
            JSON.parse(`[${values.map((v) => JSON.stringify(v)).join(",")}]`),
          );
        },
      ),
    );
  });

  it("holds only the unfinished line between chunks", () => {
    const d = new NdjsonDecoder(ctx, () => {});
    d.write(Buffer.from('{"a":1}\n{"b":'));
    assert.equal(d.pendingBytes, 5);
    d.write(Buffer.from("2}\n"));
    assert.equal(d.pendingBytes, 0);
  });

  it("skips blank lines and CRLF endings, and parses a last line without a newline", () => {
    assert.deepEqual(decodeChunks([Buffer.from('\n{"a":1}\r\n\n{"b":2}')]), [{ a: 1 }, { b: 2 }]);
  });

  it("throws a StreamDecodeError naming resource and verb on a malformed line, after the good ones", () => {
    const out: unknown[] = [];
    const d = new NdjsonDecoder(ctx, (v) => out.push(v));
    assert.throws(
      () => d.write(Buffer.from('{"a":1}\n{"b":2,,}\n{"c":3}\n')),
      (err: StreamDecodeError) => {
        assert.ok(err instanceof StreamDecodeError);
        assert.equal(err.reason, "MalformedStream");
        assert.equal(err.resource, "configmaps");
        assert.equal(err.verb, "watch");
        assert.equal(err.excerpt, '{"b":2,,}');
        return true;
      },
    );
    assert.deepEqual(out, [{ a: 1 }]);
  });

  it("throws on end when the stream stopped inside a line", () => {
    const d = new NdjsonDecoder(ctx, () => {});
    d.write(Buffer.from('{"a":1}\n{"type":"ADDED","obj'));
    assert.throws(() => d.end(), StreamDecodeError);
  });
});
