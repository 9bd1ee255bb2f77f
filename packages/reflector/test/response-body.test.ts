import { strict as assert } from "node:assert";
import type { IncomingMessage } from "node:http";
import { PassThrough } from "node:stream";
import { gzipSync } from "node:zlib";
import { ConnectionError, StreamDecodeError } from "../src/index.js";
import { readBody, responseBody } from "../src/response-body.js";

const context = { resource: "configmaps", verb: "watch" as const, namespace: "default" };

/** A response as node's HTTP client hands it over: a stream with headers, `complete` once it ended whole. */
function response(encoding: string | undefined, chunks: Buffer[], endWhole = true): IncomingMessage {
  const res = new PassThrough() as unknown as IncomingMessage & PassThrough;
  Object.assign(res, { headers: encoding ? { "content-encoding": encoding } : {}, complete: false });
  setImmediate(() => {
    for (const c of chunks) res.write(c);
    if (endWhole) {
      (res as { complete: boolean }).complete = true;
      res.end();
    } else res.destroy(); // the connection went away mid-body
  });
  return res;
}

describe("responseBody (a compressed list or watch body)", () => {
  const text = '{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n'.repeat(50);

  it("passes an uncompressed body through, and gunzips a gzip one", async () => {
    for (const [encoding, bytes] of [
      [undefined, Buffer.from(text)],
      ["gzip", gzipSync(text)],
    ] as const) {
      const res = response(encoding, [bytes]);
      assert.equal((await readBody(res, responseBody(res, context), context)).toString(), text);
    }
  });

  it("decodes a gzip body that arrives in small pieces", async () => {
    const zipped = gzipSync(text);
    const pieces = Array.from({ length: Math.ceil(zipped.length / 7) }, (_, i) =>
      zipped.subarray(i * 7, i * 7 + 7),
    );
    const res = response("gzip", pieces);
    assert.equal((await readBody(res, responseBody(res, context), context)).toString(), text);
  });

  it("refuses an encoding it did not offer, naming it, the resource and the verb", () => {
    const res = response("br", [Buffer.from("x")]);
    assert.throws(
      () => responseBody(res, context),
      (e: unknown) =>
        e instanceof StreamDecodeError &&
        /Content-Encoding br/.test(e.message) &&
        /configmaps/.test(e.message),
    );
  });

  it("says bytes that are not gzip cannot be decoded", async () => {
    const res = response("gzip", [Buffer.from("this is not gzip at all")]);
    await assert.rejects(
      readBody(res, responseBody(res, context), context),
      (e: unknown) => e instanceof StreamDecodeError && /gzip body could not be decoded/.test(e.message),
    );
  });

  it("reports a gzip body cut short as a broken connection, not as bad data", async () => {
    const zipped = gzipSync(text);
    const res = response("gzip", [zipped.subarray(0, zipped.length / 2)], false);
    await assert.rejects(
      readBody(res, responseBody(res, context), context),
      (e: unknown) => e instanceof ConnectionError,
    );
  });
});
