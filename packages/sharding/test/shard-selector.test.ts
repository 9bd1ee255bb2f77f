import { strict as assert } from "node:assert";
import fc from "fast-check";
import {
  fnv1a64,
  HASH_SPACE,
  ShardSelector,
  ShardSelectorError,
  SHARD_FIELDS,
  type HashRange,
  type ShardField,
} from "../src/ranges.js";

const HALF = 1n << 63n;
const LOWER_HALF = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')";

const bound = fc.bigInt({ min: 0n, max: HASH_SPACE });
const range: fc.Arbitrary<HashRange> = fc
  .tuple(bound, bound)
  .filter(([a, b]) => a !== b)
  .map(([a, b]) => (a < b ? { start: a, end: b } : { start: b, end: a }));
const field: fc.Arbitrary<ShardField> = fc.constantFrom(...SHARD_FIELDS);
const selector = fc
  .tuple(field, fc.array(range, { minLength: 1, maxLength: 6 }))
  .map(([f, rs]) => ShardSelector.of(f, rs));
const hash = fc.oneof(
  fc.bigInt({ min: 0n, max: HASH_SPACE - 1n }),
  fc.constantFrom(0n, HALF - 1n, HALF, HASH_SPACE - 1n),
);

function rejects(text: string, problem: RegExp): void {
  assert.throws(
    () => ShardSelector.parse(text),
    (e: unknown) => {
      assert.ok(e instanceof ShardSelectorError, `expected ShardSelectorError, got ${String(e)}`);
      assert.match(e.problem, problem);
      assert.match(e.message, /accepted form: shardRange\(<field>, '<start>', '<end>'\)/);
      assert.ok(e.message.includes(JSON.stringify(text)), "the message quotes the selector");
      return true;
    },
  );
}

describe("ShardSelector", () => {
  it("builds the exact wire form of the server's grammar", () => {
    assert.equal(ShardSelector.of("object.metadata.uid", [{ start: 0n, end: HALF }]).toString(), LOWER_HALF);
    assert.equal(
      ShardSelector.of("object.metadata.namespace", [
        { start: 0n, end: 0x10n },
        { start: HALF, end: HASH_SPACE },
      ]).toString(),
      "shardRange(object.metadata.namespace, '0x0000000000000000', '0x0000000000000010') || " +
        "shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')",
    );
    assert.equal(
      ShardSelector.everything().toString(),
      "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')",
    );
  });

  it("parses what it builds, for any selector", () => {
    fc.assert(
      fc.property(selector, (s) => {
        const back = ShardSelector.parse(s.toString());
        assert.ok(back.equals(s));
        assert.equal(back.toString(), s.toString());
      }),
    );
  });

  it("accepts whitespace between tokens, as the server's CEL parser does, and re-serializes it canonically", () => {
    const loose =
      "  shardRange ( object.metadata.uid ,'0x0000000000000000',\t'0x8000000000000000' )||" +
      "shardRange(object . metadata . uid, '0x9000000000000000', '0x10000000000000000')\n";
    assert.equal(
      ShardSelector.parse(loose).toString(),
      LOWER_HALF + " || shardRange(object.metadata.uid, '0x9000000000000000', '0x10000000000000000')",
    );
  });

  it("canonicalises to sorted, merged ranges that match exactly the same hashes", () => {
    fc.assert(
      fc.property(selector, fc.array(hash, { maxLength: 20 }), (s, hashes) => {
        const c = s.canonical();
        for (let i = 1; i < c.ranges.length; i++) assert.ok(c.ranges[i - 1]!.end < c.ranges[i]!.start);
        assert.ok(c.canonical().equals(c));
        assert.ok(s.equivalent(c));
        const probes = [...hashes, ...s.ranges.flatMap((r) => [r.start, r.end - 1n, r.end])].filter(
          (h) => h < HASH_SPACE,
        );
        for (const h of probes) assert.equal(c.matchesBigInt(h), s.matchesBigInt(h));
      }),
    );
  });

  it("matches a hash exactly when some range holds it, half-open", () => {
    fc.assert(
      fc.property(selector, hash, (s, h) => {
        const expected = s.ranges.some((r) => h >= r.start && h < r.end);
        assert.equal(s.matchesBigInt(h), expected);
      }),
    );
    const lower = ShardSelector.parse(LOWER_HALF);
    assert.equal(lower.matchesBigInt(HALF - 1n), true);
    assert.equal(lower.matchesBigInt(HALF), false);
    assert.equal(ShardSelector.everything().matchesBigInt(HASH_SPACE - 1n), true);
  });

  it("matches objects on the hash of their uid or namespace", () => {
    const uid = "6f1b2c1e-3a4d-4f5e-9a8b-7c6d5e4f3a2b"; // hashes to 0x712e9d902746bcdb
    const byUid = ShardSelector.of("object.metadata.uid", [
      { start: 0x712e9d902746bcdbn, end: 0x712e9d902746bcdcn },
    ]);
    assert.equal(byUid.matchesObject({ metadata: { uid, namespace: "x" } }), true);
    assert.equal(byUid.matchesObject({ metadata: { uid: uid.replace("6f", "6e") } }), false);
    const ns = fnv1a64("kube-system");
    const byNs = ShardSelector.of("object.metadata.namespace", [{ start: ns, end: ns + 1n }]);
    assert.equal(byNs.matchesObject({ metadata: { uid, namespace: "kube-system" } }), true);
    assert.equal(byNs.matchesObject({ metadata: { uid, namespace: "default" } }), false);
    const empty = fnv1a64("");
    const cluster = ShardSelector.of("object.metadata.namespace", [{ start: empty, end: empty + 1n }]);
    assert.equal(
      cluster.matchesObject({ metadata: { uid } }),
      true,
      "cluster-scoped objects hash the empty namespace",
    );
  });

  describe("rejects, naming the problem and the accepted forms,", () => {
    const cases: ReadonlyArray<readonly [string, string, RegExp]> = [
      ["an empty selector", "   ", /empty/],
      [
        "uppercase hex",
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000ABC')",
        /lowercase/,
      ],
      [
        "15 hex digits",
        "shardRange(object.metadata.uid, '0x000000000000000', '0x8000000000000000')",
        /exactly 16 hex digits.*did you mean '0x0000000000000000'/,
      ],
      [
        "a short bound",
        "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')",
        /did you mean '0x0000000000000000'/,
      ],
      [
        "a 17-digit bound other than 2^64",
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000001')",
        /only 17-digit bound/,
      ],
      [
        "a bound over 17 digits",
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x100000000000000000')",
        /exactly 16 hex digits/,
      ],
      [
        "a bound without 0x",
        "shardRange(object.metadata.uid, '0000000000000000', '8000000000000000')",
        /must start with 0x/,
      ],
      [
        "a double-quoted bound",
        'shardRange(object.metadata.uid, "0x0000000000000000", "0x8000000000000000")',
        /single-quoted/,
      ],
      [
        "an unquoted bound",
        "shardRange(object.metadata.uid, 0x0000000000000000, '0x8000000000000000')",
        /single-quoted/,
      ],
      [
        "start = end",
        "shardRange(object.metadata.uid, '0x8000000000000000', '0x8000000000000000')",
        /start '0x8000000000000000' must be less than end/,
      ],
      [
        "start > end",
        "shardRange(object.metadata.uid, '0x9000000000000000', '0x8000000000000000')",
        /must be less than end/,
      ],
      [
        "start at 2^64",
        "shardRange(object.metadata.uid, '0x10000000000000000', '0x10000000000000000')",
        /must be less than end/,
      ],
      [
        "an unsupported field",
        "shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')",
        /unsupported field path "object.metadata.name", supported: object.metadata.uid, object.metadata.namespace/,
      ],
      [
        "two fields",
        LOWER_HALF + " || shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')",
        /same field/,
      ],
      [
        "another function",
        "hashRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
        /unsupported function "hashRange"/,
      ],
      ["&&", LOWER_HALF + " && " + LOWER_HALF, /'&&' is not supported/],
      ["a single |", LOWER_HALF + " | " + LOWER_HALF, /expected ' \|\| '/],
      ["a dangling ||", LOWER_HALF + " || ", /expected shardRange\(/],
      ["a missing argument", "shardRange(object.metadata.uid, '0x0000000000000000')", /expected ','/],
      [
        "an extra argument",
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000', '0x0000000000000000')",
        /exactly 3 arguments/,
      ],
      [
        "a missing parenthesis",
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000'",
        /expected '\)'/,
      ],
      [
        "an unclosed quote",
        "shardRange(object.metadata.uid, '0x0000000000000000, '0x8000000000000000')",
        /./,
      ],
      ["grouping parentheses", "(" + LOWER_HALF + ")", /expected shardRange\(/],
      ["trailing text", LOWER_HALF + " x", /expected ' \|\| ' or the end/],
    ];
    for (const [what, text, problem] of cases) it(what, () => rejects(text, problem));
  });

  it("reports where the problem is", () => {
    const text = "shardRange(object.metadata.uid, '0x0000000000000000', '0X8000000000000000')";
    try {
      ShardSelector.parse(text);
      assert.fail("accepted");
    } catch (e) {
      assert.ok(e instanceof ShardSelectorError);
      assert.equal(e.position, text.indexOf("'0X"));
      assert.match(e.message, /end bound "0X8000000000000000" must start with 0x \(at character 54\)/);
    }
  });

  it("refuses to build a selector the server would reject", () => {
    assert.throws(() => ShardSelector.of("object.metadata.uid", []), /no range/);
    assert.throws(() => ShardSelector.of("object.metadata.uid", [{ start: 5n, end: 5n }]), /not below end/);
    assert.throws(
      () => ShardSelector.of("object.metadata.uid", [{ start: 0n, end: HASH_SPACE + 1n }]),
      /leaves \[0, 2\^64\)/,
    );
    assert.throws(
      () => ShardSelector.of("object.metadata.uid", [{ start: -1n, end: 1n }]),
      ShardSelectorError,
    );
    assert.throws(
      () => ShardSelector.of("object.metadata.name" as ShardField, [{ start: 0n, end: 1n }]),
      /unsupported field "object.metadata.name"/,
    );
  });

  it("rejects any string that is not exactly a well-formed selector after whitespace is removed", () => {
    // Mutate one character of a valid selector: the result either fails to parse or
    // is again a selector whose wire form equals the mutated text (e.g. a changed hex digit).
    const alphabet = "0123456789abcdefABCDEFxX'\"(),| .";
    fc.assert(
      fc.property(selector, fc.nat(), fc.constantFrom(...alphabet), (s, at, ch) => {
        const text = s.toString();
        const i = at % text.length;
        const mutated = text.slice(0, i) + ch + text.slice(i + 1);
        let parsed: ShardSelector | undefined;
        try {
          parsed = ShardSelector.parse(mutated);
        } catch (e) {
          assert.ok(e instanceof ShardSelectorError);
          return;
        }
        assert.equal(parsed.toString().replace(/\s+/g, ""), mutated.replace(/\s+/g, ""));
      }),
      { numRuns: 1000 },
    );
  });
});
