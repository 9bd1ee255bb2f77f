import { strict as assert } from "node:assert";
import fc from "fast-check";
import { StreamDecodeError } from "../src/index.js";
import { decodeListBody } from "../src/list-body.js";
import { fuzz } from "@tessera/core/testing/fuzz";

// A LIST page is the other door for the API server's bytes: KubeListerWatcher.list
// hands the body to decodeListBody. Whatever the body, the result is a page
// with an items array or a StreamDecodeError naming resource and verb.

const ctx = { resource: "configmaps", verb: "list" as const };

function decode(body: Buffer): ReturnType<typeof decodeListBody> | StreamDecodeError {
  try {
    return decodeListBody(body, ctx);
  } catch (error) {
    assert.ok(error instanceof StreamDecodeError, `not a StreamDecodeError: ${String(error)}`);
    assert.equal(error.reason, "MalformedStream");
    assert.equal(error.resource, "configmaps");
    assert.equal(error.verb, "list");
    assert.match(
      error.message,
      /^list configmaps: MalformedStream: the list response (is not JSON|has no items array)/,
    );
    assert.ok(error.excerpt.length <= 200);
    return error;
  }
}

const item = fc.record(
  {
    metadata: fc.record(
      { name: fc.string(), namespace: fc.string(), resourceVersion: fc.nat().map(String) },
      { requiredKeys: [] },
    ),
    data: fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 }),
  },
  { requiredKeys: [] },
);

/** Pages as a server could send them, or nearly: metadata and continue tokens of any shape, null items. */
const page = fc.record(
  {
    kind: fc.constantFrom("ConfigMapList", "Status", ""),
    apiVersion: fc.constant("v1"),
    metadata: fc.oneof(
      fc.record(
        {
          resourceVersion: fc.oneof(fc.nat().map(String), fc.jsonValue()),
          continue: fc.oneof(fc.base64String(), fc.string(), fc.jsonValue()),
          remainingItemCount: fc.oneof(fc.integer(), fc.jsonValue()),
        },
        { requiredKeys: [] },
      ),
      fc.jsonValue(),
    ),
    items: fc.oneof(
      fc.array(item, { maxLength: 5 }),
      fc.constant(null),
      fc.array(fc.jsonValue(), { maxLength: 3 }),
      fc.jsonValue(),
    ),
  },
  { requiredKeys: [] },
);

describe("LIST page decoding (fuzz)", () => {
  it("arbitrary bytes: a page with an items array, or a StreamDecodeError", () => {
    fuzz(
      "list page: arbitrary bytes",
      fc.oneof(
        fc.uint8Array({ maxLength: 300 }),
        fc.string().map((s) => new Uint8Array(Buffer.from(s))),
      ),
      (bytes) => {
        const got = decode(Buffer.from(bytes));
        if (!(got instanceof StreamDecodeError)) assert.ok(Array.isArray(got.items));
      },
      1500,
    );
  });

  it("pages of any shape: items kept as sent (null as []), or refused when items is not a list", () => {
    fuzz(
      "list page: odd pages",
      page,
      (p) => {
        const text = JSON.stringify(p);
        const sent = JSON.parse(text) as { items?: unknown; metadata?: unknown };
        const got = decode(Buffer.from(text));
        const items = sent.items;
        if (Array.isArray(items) || items === null) {
          assert.ok(!(got instanceof StreamDecodeError), "a page with an items array was refused");
          assert.deepEqual(got.items, items ?? []);
          assert.deepEqual(got.metadata, sent.metadata);
        } else {
          assert.ok(got instanceof StreamDecodeError);
          assert.match(got.message, /has no items array/);
        }
      },
      1000,
    );
  });

  it("a valid page truncated or with a byte changed: a page or a StreamDecodeError, never another error", () => {
    fuzz(
      "list page: mutated valid pages",
      fc.record({
        p: page,
        cut: fc.nat(),
        flips: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 3 }),
      }),
      ({ p, cut, flips }) => {
        const buf = Buffer.from(JSON.stringify(p));
        for (const [at, byte] of flips) buf[at % buf.length] = byte;
        const got = decode(buf.subarray(0, buf.length - (cut % buf.length)));
        if (!(got instanceof StreamDecodeError)) assert.ok(Array.isArray(got.items));
      },
      1000,
    );
  });
});
