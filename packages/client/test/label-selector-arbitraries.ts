// Label selectors to test with, biased to the edges of the API server's
// grammar: `in(` without a space, `>` and `<`, keys and values too long or
// malformed, empty requirements, keywords as keys and values, stray symbols.
import fc from "fast-check";

/** Label keys the test objects carry. */
export const KEYS = ["app", "tier", "env", "n", "size", "example.com/team", "in", "notin", "a.b_c-d", "X"];
/** Label values of words (keywords and the empty value among them). */
export const WORDS = ["web", "db", "api", "", "in", "notin", "a.b", "A-1", "12a"];
/** Label values that are integers (leading zeros, the largest 64-bit one). */
export const NUMBERS = ["0", "1", "3", "7", "10", "42", "007", "100", "9223372036854775807"];

const BAD_KEYS = [
  "",
  "-a",
  "a-",
  "_a",
  "a/b/c",
  "/a",
  "a/",
  "Example.com/a",
  "exa_mple.com/a",
  "-ex.com/a",
  "x".repeat(63),
  "x".repeat(64),
  `${"p".repeat(253)}/a`,
  `${"p".repeat(254)}/a`,
  "é",
  "a*b",
  "a:b",
  "a'b",
];
const BAD_VALUES = [
  "-x",
  "x-",
  ".x",
  "x".repeat(63),
  "x".repeat(64),
  "é",
  "+5",
  "-5",
  "99999999999999999999",
  "9223372036854775808",
  "-9223372036854775808",
  "a/b",
  "a*b",
];

/** Selectors written out, for what sampling may miss. */
export const WRITTEN = [
  "",
  " \t\n",
  "x in(a,b)",
  "xin(a)",
  "in in (in,notin)",
  "notin=in",
  "a in ()",
  "a in (,)",
  "a in (b,,,)",
  "a in (,,b)",
  "n>007",
  "n<-0",
  "n>9223372036854775807",
  "n>9223372036854775808",
  "a=b,,c=d",
  "a=b,",
  ",a",
  "!a=b",
  "!!a",
  "a!b",
  "a=x\0junk",
  "a\0b",
  "a,\0b",
  "a \0b",
  "a=b\0",
  "\0,",
  "a in (b\0,c)",
  "constructor",
  "!toString",
  "a=é",
];

/** Mostly one of `usual`, now and then (one time in `1 + odds`) one of `edges`. */
function mostly<T>(usual: readonly T[], edges: readonly T[], odds = 6): fc.Arbitrary<T> {
  return fc.oneof(
    { weight: odds, arbitrary: fc.constantFrom(...usual) },
    { weight: 1, arbitrary: fc.constantFrom(...edges) },
  );
}

const word = fc.string({ unit: fc.constantFrom(..."abXZ019-_./"), maxLength: 6 });
const key = fc.oneof({ weight: 12, arbitrary: mostly(KEYS, BAD_KEYS, 12) }, { weight: 1, arbitrary: word });
const value = fc.oneof(
  { weight: 12, arbitrary: mostly([...WORDS, ...NUMBERS], BAD_VALUES, 12) },
  { weight: 1, arbitrary: word },
);
const space = mostly(["", " "], ["  ", "\t", "\n", "\r"], 3);
const values = fc
  .array(fc.oneof({ weight: 5, arbitrary: value }, { weight: 1, arbitrary: fc.constant("") }), {
    maxLength: 4,
  })
  .map((vs) => vs.join(","));
const junk = fc.string({ unit: fc.constantFrom(..."ab1=!()<>, \tin"), maxLength: 8 });

const requirement = fc.oneof(
  { weight: 2, arbitrary: fc.tuple(space, key, space).map((p) => p.join("")) },
  { weight: 2, arbitrary: fc.tuple(space, mostly(["!"], ["! ", "!!"]), key).map((p) => p.join("")) },
  {
    weight: 4,
    arbitrary: fc
      .tuple(key, space, mostly(["=", "==", "!="], ["=!", "===", "!", "= ="]), space, value)
      .map((p) => p.join("")),
  },
  {
    weight: 4,
    arbitrary: fc
      .tuple(
        key,
        mostly([" in ", " in", " notin ", " notin"], ["in", "notin", " In ", " in in"]),
        mostly(["(", "( "], [""]),
        values,
        mostly([")", " )"], ["", "))"]),
      )
      .map(([k, op, open, vs, close]) => `${k}${op}${open}${vs}${close}`),
  },
  {
    weight: 4,
    arbitrary: fc
      .tuple(
        key,
        space,
        mostly([">", "<"], [">=", "<=", "<>", "><"]),
        space,
        fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...NUMBERS) }, { weight: 1, arbitrary: value }),
      )
      .map((p) => p.join("")),
  },
  { weight: 1, arbitrary: junk },
);
const separator = mostly([",", ", ", " ,"], [",,", ", ,", " , , "], 12);
/** A selector of one to three requirements, now and then malformed in one of many ways. */
export const selector = fc
  .tuple(
    mostly([""], [",", " ", "\t"], 12),
    fc.array(fc.tuple(requirement, separator), { maxLength: 2 }),
    requirement,
    mostly([""], [",", " ", " , "], 12),
  )
  .map(([lead, rest, last, trail]) => `${lead}${rest.map(([r, s]) => r + s).join("")}${last}${trail}`);
