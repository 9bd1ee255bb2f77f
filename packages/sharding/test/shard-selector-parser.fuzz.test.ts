import { strict as assert } from "node:assert";
import fc from "fast-check";
import {
  formatHashBound,
  HASH_SPACE,
  parseShardSelector,
  SHARD_FIELDS,
  ShardSelectorError,
  type ParsedShardSelector,
} from "../src/ranges.js";
import { fuzz } from "@tessera/core/testing/fuzz";

// A shard selector comes from configuration or a user's flag and goes to the
// API server, which answers a malformed one with HTTP 500: the parser is the
// boundary. Whatever the text, it is a selector the server accepts or a
// ShardSelectorError saying what and where.

/** Parses `text`; checks the result is well formed or the error is a ShardSelectorError that quotes the text. */
function parseOrRefuse(text: string): ParsedShardSelector | ShardSelectorError {
  try {
    const parsed = parseShardSelector(text);
    assert.ok(SHARD_FIELDS.includes(parsed.field));
    assert.ok(parsed.ranges.length >= 1);
    for (const r of parsed.ranges) assert.ok(r.start >= 0n && r.start < r.end && r.end <= HASH_SPACE);
    return parsed;
  } catch (error) {
    assert.ok(error instanceof ShardSelectorError, `not a ShardSelectorError: ${String(error)}`);
    assert.ok(error.problem.length > 0);
    assert.equal(error.selector, text);
    assert.ok(error.message.includes(JSON.stringify(text)), "the message quotes the selector");
    if (error.position !== undefined) assert.ok(error.position >= 0 && error.position <= text.length);
    return error;
  }
}

const bound = fc.bigInt({ min: 0n, max: HASH_SPACE });
const term = fc
  .record({
    field: fc.constantFrom(...SHARD_FIELDS),
    a: bound,
    b: bound,
    space: fc.constantFrom("", " ", "\t", "\n "),
  })
  .map(
    ({ field, a, b, space: s }) =>
      `shardRange(${s}${field}${s},${s}'${formatHashBound(a)}'${s},${s}'${formatHashBound(b)}'${s})`,
  );
const valid = fc.array(term, { minLength: 1, maxLength: 4 }).map((ts) => ts.join(" || "));
/** The grammar's own characters, so mutations make near misses rather than noise. */
const grammarChar = fc.constantFrom(..."shardRange(),'0x1fF .|&\"object.metadata.uidnamespace\t\n");

const mutated = fc
  .record({
    text: valid,
    edits: fc.array(
      fc.record({
        at: fc.nat(),
        op: fc.constantFrom("insert", "delete", "replace"),
        ch: fc.oneof(grammarChar, fc.string({ maxLength: 2 })),
      }),
      { minLength: 1, maxLength: 4 },
    ),
    cut: fc.option(fc.nat(), { nil: undefined }),
  })
  .map(({ text, edits, cut }) => {
    let t = text;
    for (const { at, op, ch } of edits) {
      const i = at % (t.length + 1);
      if (op === "insert") t = t.slice(0, i) + ch + t.slice(i);
      else if (op === "delete") t = t.slice(0, i) + t.slice(i + 1);
      else t = t.slice(0, i) + ch + t.slice(i + 1);
    }
    return cut === undefined ? t : t.slice(0, cut % (t.length + 1));
  });

describe("shard selector parser (fuzz)", () => {
  it("arbitrary text: a selector the server accepts, or a ShardSelectorError that says where", () => {
    fuzz(
      "shard selector: arbitrary text",
      fc.oneof(
        fc.string(),
        fc.string({ unit: "grapheme" }),
        fc.array(grammarChar, { maxLength: 80 }).map((cs) => cs.join("")),
      ),
      (text) => void parseOrRefuse(text),
      3000,
    );
  });

  it("valid selectors parse to their ranges; damaged ones parse or are refused", () => {
    fuzz(
      "shard selector: valid and damaged selectors",
      fc.oneof(
        valid,
        mutated,
        mutated.map((t) => t.repeat(50)),
      ),
      (text) => void parseOrRefuse(text),
      3000,
    );
  });
});
