import { strict as assert } from "node:assert";
import fc from "fast-check";
import { ApiStatusError, ListWatchError, NdjsonDecoder, StreamDecodeError } from "../src/index.js";
import { toWatchEvent } from "../src/watch-event-decoding.js";
import type { WatchEvent } from "../src/watch-event.js";
import { fuzz } from "@tessera/core/testing/fuzz";

// The watch stream is where the API server's (or a proxy's) bytes enter: each
// line goes through NdjsonDecoder, then toWatchEvent, exactly as
// KubeListerWatcher.watch wires them. Whatever arrives, the result is events
// or one typed ListWatchError, and the events before the bad line are kept.

const ctx = { resource: "widgets.example.com", verb: "watch" as const, namespace: "ns-1" };
const EVENT_TYPES = ["ADDED", "MODIFIED", "DELETED", "BOOKMARK"];

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

/** Feeds `chunks` through the decoder and the event check; returns the events and the error, if any. */
function watchStream(chunks: Buffer[]): { events: WatchEvent[]; error?: unknown } {
  const events: WatchEvent[] = [];
  const decoder = new NdjsonDecoder(ctx, (value) => events.push(toWatchEvent(value, ctx)));
  try {
    for (const c of chunks) decoder.write(c);
    decoder.end();
  } catch (error) {
    return { events, error };
  }
  return { events };
}

/** What each line of `bytes` should give, by the documented rules: the events up to the first bad line. */
function expected(bytes: Buffer): { events: unknown[]; bad: boolean } {
  const events: unknown[] = [];
  for (let line of bytes.toString("utf8").split("\n")) {
    // Decoding per line or whole gives the same text: "\n" never occurs inside a UTF-8 sequence.
    if (line.endsWith("\r")) line = line.slice(0, -1);
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      if (line.trim() === "") continue;
      return { events, bad: true };
    }
    const v = value as { type?: unknown; object?: unknown } | null;
    if (
      v === null ||
      typeof v !== "object" ||
      typeof v.type !== "string" ||
      !EVENT_TYPES.includes(v.type) ||
      typeof v.object !== "object" ||
      v.object === null ||
      Array.isArray(v.object)
    ) {
      return { events, bad: true };
    }
    events.push(value);
  }
  return { events, bad: false };
}

function assertTypedError(error: unknown): void {
  assert.ok(error instanceof ListWatchError, `not a ListWatchError: ${String(error)}`);
  assert.ok(error instanceof StreamDecodeError || error instanceof ApiStatusError, error.name);
  assert.equal(error.resource, ctx.resource);
  assert.equal(error.verb, "watch");
  assert.match(error.message, /^watch widgets\.example\.com in namespace "ns-1": .+/);
  assert.equal(typeof error.reason, "string");
  assert.notEqual(error.reason, "");
}

const eventObject = fc.record({
  apiVersion: fc.constant("example.com/v1"),
  kind: fc.constant("Widget"),
  metadata: fc.record({ name: fc.string({ unit: "grapheme" }), resourceVersion: fc.nat().map(String) }),
  spec: fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 4 }),
});
const goodLine = fc
  .record({ type: fc.constantFrom(...EVENT_TYPES), object: eventObject })
  .map((e) => JSON.stringify(e));

/** Lines that must stop the stream: truncated, invalid, the wrong shape, unknown types, ERROR events. */
const badLine = fc.oneof(
  goodLine.chain((l) => fc.integer({ min: 1, max: l.length - 1 }).map((n) => l.slice(0, n))),
  fc
    .string({ minLength: 1 })
    .filter((s) => !s.includes("\n"))
    .map((s) => `{${s}`),
  fc.jsonValue().map((v) => JSON.stringify({ value: v })),
  fc
    .jsonValue()
    .filter((v) => typeof v !== "object" || v === null || Array.isArray(v))
    .map((v) => JSON.stringify(v)),
  fc
    .string()
    .filter((t) => !EVENT_TYPES.includes(t))
    .chain((type) => eventObject.map((object) => JSON.stringify({ type, object }))),
  fc
    .constantFrom(...EVENT_TYPES)
    .chain((type) =>
      fc.constantFrom(null, 1, "x", [], true).map((object) => JSON.stringify({ type, object })),
    ),
  fc
    .jsonValue()
    .map((object) => JSON.stringify({ type: "ERROR", object: { kind: "Status", detail: object } })),
  fc.constant('{"type":"ADDED","object":{"metadata":{"name":"' + "x".repeat(1 << 20)), // a huge, cut line
);

describe("watch stream decoding (fuzz)", () => {
  it("arbitrary bytes in arbitrary chunks: events as the lines say, or one typed error", () => {
    fuzz(
      "watch stream: arbitrary bytes",
      fc.record({
        bytes: fc.oneof(
          fc.uint8Array({ maxLength: 300 }),
          fc
            .array(fc.oneof(goodLine, fc.string()), { maxLength: 6 })
            .map((ls) => new Uint8Array(Buffer.from(ls.join("\n")))),
        ),
        cuts: fc.array(fc.nat(), { maxLength: 8 }),
      }),
      ({ bytes, cuts }) => {
        const buf = Buffer.from(bytes);
        const { events, error } = watchStream(split(buf, cuts));
        const want = expected(buf);
        assert.deepEqual(events, want.events);
        assert.equal(error !== undefined, want.bad);
        if (error !== undefined) assertTypedError(error);
      },
      400,
    );
  });

  it("a valid stream with one damaged line keeps every event before it and names the line", () => {
    fuzz(
      "watch stream: one damaged line among good ones",
      fc.record({
        before: fc.array(goodLine, { maxLength: 8 }),
        bad: badLine,
        after: fc.array(goodLine, { maxLength: 3 }),
        cuts: fc.array(fc.nat(), { maxLength: 8 }),
        crlf: fc.boolean(),
      }),
      ({ before, bad, after, cuts, crlf }) => {
        const nl = crlf ? "\r\n" : "\n";
        const buf = Buffer.from([...before, bad, ...after].join(nl) + nl);
        const { events, error } = watchStream(split(buf, cuts));
        assert.deepEqual(
          events,
          before.map((l) => JSON.parse(l) as unknown),
        );
        assertTypedError(error);
        if (error instanceof StreamDecodeError) {
          assert.equal(error.reason, "MalformedStream");
          assert.ok(error.excerpt.length <= 200);
        }
      },
      250,
    );
  });

  it("any JSON value as a watch line: an event of a known type with an object, or a typed error", () => {
    fuzz(
      "watch event shape: arbitrary JSON",
      fc.oneof(
        fc.jsonValue(),
        fc.record(
          {
            type: fc.oneof(fc.constantFrom(...EVENT_TYPES, "ERROR", "added", ""), fc.jsonValue()),
            object: fc.jsonValue(),
          },
          { requiredKeys: [] },
        ),
      ),
      (value) => {
        let event: WatchEvent;
        try {
          event = toWatchEvent(value, ctx);
        } catch (error) {
          assertTypedError(error);
          return;
        }
        assert.ok(EVENT_TYPES.includes(event.type));
        assert.equal(typeof event.object, "object");
        assert.notEqual(event.object, null);
      },
      2000,
    );
  });

  it("ERROR events with odd Status bodies: an ApiStatusError with a string reason and message", () => {
    const odd = fc.oneof(fc.jsonValue(), fc.constantFrom(0, -1, 1.5, 1e300, 410, "410", "", null));
    fuzz(
      "watch ERROR event: odd Status",
      fc.record(
        { kind: odd, apiVersion: odd, code: odd, reason: odd, message: odd, status: odd, details: odd },
        { requiredKeys: [] },
      ),
      (status) => {
        assert.throws(
          () => toWatchEvent({ type: "ERROR", object: status }, ctx),
          (error: unknown) => {
            assertTypedError(error);
            assert.ok(error instanceof ApiStatusError);
            assert.equal(error.source, "event");
            assert.ok(Number.isInteger(error.code) && error.code >= 0, `code ${String(error.code)}`);
            assert.equal(error.status, status);
            return true;
          },
        );
      },
      2000,
    );
  });
});

// Counterexamples the fuzz targets found, kept as examples.
describe("watch event shape (found by fuzzing)", () => {
  it("refuses an event whose object is an array", () => {
    assert.throws(
      () => toWatchEvent({ type: "ADDED", object: [] }, ctx),
      (e: unknown) => e instanceof StreamDecodeError && /a ADDED event carries no object/.test(e.message),
    );
  });

  it("gives an ERROR event with a mistyped Status a string reason and an HTTP code", () => {
    assert.throws(
      () => toWatchEvent({ type: "ERROR", object: { reason: 1.5, code: "410", message: {} } }, ctx),
      (e: unknown) =>
        e instanceof ApiStatusError &&
        e.code === 500 &&
        e.reason === "InternalError" &&
        /the watch ended with an ERROR event/.test(e.message),
    );
  });
});
