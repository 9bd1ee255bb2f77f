// The label selector grammar of k8s.io/apimachinery/pkg/labels, case by case
// (label-selector-parity.test.ts checks the same against a real API server).
import { strict as assert } from "node:assert";
import {
  labelMatcher,
  labelSelectorString,
  LabelSelectorError,
  parseLabelSelector,
  type LabelSelectorInput,
} from "../src/index.js";

function refusal(selector: LabelSelectorInput): LabelSelectorError {
  try {
    parseLabelSelector(selector);
  } catch (error) {
    assert.ok(error instanceof LabelSelectorError, String(error));
    return error;
  }
  assert.fail(`${JSON.stringify(selector)} was accepted`);
}

describe("label selectors", () => {
  describe("accepted as the API server accepts them", () => {
    it("reads equality, sets, existence and integer comparisons", () => {
      assert.deepEqual(parseLabelSelector("b==2, a in (y,x,x),!c,d,e!=1,f notin (z),g>3,h<0"), [
        { key: "a", operator: "in", values: ["x", "y"] },
        { key: "b", operator: "==", values: ["2"] },
        { key: "c", operator: "!", values: [] },
        { key: "d", operator: "exists", values: [] },
        { key: "e", operator: "!=", values: ["1"] },
        { key: "f", operator: "notin", values: ["z"] },
        { key: "g", operator: "gt", values: ["3"] },
        { key: "h", operator: "lt", values: ["0"] },
      ]);
    });

    it("needs no space around operators or before '(': `in(` is `in` then `(`", () => {
      assert.deepEqual(parseLabelSelector("x in(a,b)"), [{ key: "x", operator: "in", values: ["a", "b"] }]);
      assert.deepEqual(parseLabelSelector("x notin(a)"), [{ key: "x", operator: "notin", values: ["a"] }]);
      assert.deepEqual(parseLabelSelector("x>3"), [{ key: "x", operator: "gt", values: ["3"] }]);
      assert.deepEqual(parseLabelSelector("\tx \n= \ry "), [{ key: "x", operator: "=", values: ["y"] }]);
    });

    it("takes `in` and `notin` as keys and values where a word is expected", () => {
      assert.deepEqual(parseLabelSelector("in in (in,notin)"), [
        { key: "in", operator: "in", values: ["in", "notin"] },
      ]);
      assert.deepEqual(parseLabelSelector("notin=in"), [{ key: "notin", operator: "=", values: ["in"] }]);
    });

    it("reads empty values: `a=`, `a in ()`, `(,b)`, `(b,)`, `(b,,c)`", () => {
      assert.deepEqual(parseLabelSelector("a=")[0]!.values, [""]);
      assert.deepEqual(parseLabelSelector("a==,b")[0]!.values, [""]);
      assert.deepEqual(parseLabelSelector("a in ()")[0]!.values, [""]);
      assert.deepEqual(parseLabelSelector("a in (,b)")[0]!.values, ["", "b"]);
      assert.deepEqual(parseLabelSelector("a in (b,)")[0]!.values, ["", "b"]);
      assert.deepEqual(parseLabelSelector("a in (b,,c)")[0]!.values, ["", "b", "c"]);
      assert.deepEqual(parseLabelSelector("a in (b,,,)")[0]!.values, ["", "b"]);
    });

    it("takes an empty or blank selector as no requirement", () => {
      assert.deepEqual(parseLabelSelector(""), []);
      assert.deepEqual(parseLabelSelector(" \t\n"), []);
      assert.deepEqual(parseLabelSelector({}), []);
      assert.equal(labelMatcher("")({}), true);
    });

    it("accepts keys and values at their longest", () => {
      const prefix = `${"p".repeat(61)}.${"q".repeat(61)}.${"r".repeat(61)}.${"s".repeat(67)}`;
      assert.equal(prefix.length, 253);
      const key = `${prefix}/${"N".repeat(63)}`;
      assert.deepEqual(parseLabelSelector(`${key}=${"v".repeat(63)}`), [
        { key, operator: "=", values: ["v".repeat(63)] },
      ]);
      assert.deepEqual(parseLabelSelector("a>9223372036854775807,b<007")[0]!.values, ["9223372036854775807"]);
    });
  });

  describe("refused as the API server refuses them, saying what and where", () => {
    const cases: [string, number, RegExp][] = [
      ["a=b,,c=d", 4, /found ',', expected a requirement after ','.*empty requirements/],
      ["a=b,", 4, /found the end, expected a requirement after ','/],
      [",a", 0, /found ',', expected '!', a key, or the end/],
      ["a b", 2, /found 'b', expected one of in, notin, =, ==, !=, >, </],
      ["!a=b", 2, /found '=', expected ',' or the end/],
      ["a=!b", 2, /found '!', expected a value/],
      ["a===b", 3, /found '=', expected a value/],
      ["a<>3", 2, /found '>', expected a value/],
      ["a in b", 5, /found 'b', expected '\('/],
      ["a in (b", 7, /found the end, expected ',' or '\)'/],
      ["a in", 4, /found the end, expected '\('/],
      ["xin(a)", 3, /found '\(', expected one of/],
      ["a>b", 2, /for '>' the value must be a 64-bit integer, not "b"/],
      ["a<", 2, /for '<' the value must be a 64-bit integer, not ""/],
      ["a>9223372036854775808", 2, /64-bit integer/],
      ["a>-1", 2, /value "-1" of key "a": must be empty or consist of/],
      [`${"k".repeat(64)}=v`, 0, /name part must be no more than 63 characters/],
      [`${"p".repeat(254)}/k`, 0, /prefix part must be no more than 253 characters/],
      ["Example.com/k", 0, /prefix part must be a DNS-1123 subdomain/],
      ["a/b/c", 0, /at most one '\/'/],
      ["/a", 0, /prefix part must be non-empty/],
      ["x,a/", 2, /name part must be non-empty/],
      ["-a", 0, /name part must consist of alphanumeric/],
      [`a=${"v".repeat(64)}`, 2, /value "v{64}" of key "a": must be no more than 63 characters/],
      ["a in (b,-c)", 5, /value "-c" of key "a"/],
      ["a=é", 2, /value "é" of key "a"/],
      ["a=x\0junk", 4, /found 'junk', expected ',' or the end/],
    ];
    for (const [selector, offset, message] of cases) {
      const title =
        selector.length > 40 ? `${selector.slice(0, 12)}... (${selector.length} characters)` : selector;
      it(JSON.stringify(title), () => {
        const error = refusal(selector);
        assert.equal(error.selector, selector);
        assert.equal(error.offset, offset);
        assert.match(error.message, message);
        assert.match(error.message, new RegExp(`at offset ${offset}: `));
        assert.match(error.message, /write requirements joined by commas: key=value/);
        assert.throws(() => labelMatcher(selector), LabelSelectorError);
        assert.throws(() => labelSelectorString(selector), LabelSelectorError);
      });
    }

    it("validates required labels as the server validates a set", () => {
      assert.match(refusal({ app: "web", "bad key": "x" }).message, /key "bad key": name part must consist/);
      assert.match(refusal({ app: "a,b" }).message, /value "a,b" of key "app"/);
      assert.equal(refusal({ app: "a,b" }).offset, undefined);
    });
  });

  describe("matching", () => {
    it("matches sets, equality and existence as the server does", () => {
      const m = labelMatcher("app=web, tier in (front,back),env!=prod,!legacy,team");
      assert.equal(m({ app: "web", tier: "front", env: "dev", team: "a" }), true);
      assert.equal(m({ app: "web", tier: "front", team: "a" }), true, "!= holds when the key is absent");
      assert.equal(m({ app: "web", tier: "db", team: "a" }), false);
      assert.equal(m({ app: "web", tier: "back", env: "prod", team: "a" }), false);
      assert.equal(m({ app: "web", tier: "back", team: "a", legacy: "" }), false);
      assert.equal(labelMatcher("x notin (a)")({}), true);
      assert.equal(
        labelMatcher("x in (a,)")({ x: "" }),
        true,
        "an empty value in a set matches an empty label",
      );
      assert.equal(labelMatcher("x=")({}), false, "= needs the key");
    });

    it("compares integers with > and <, and nothing else", () => {
      const gt = labelMatcher("n>7");
      assert.equal(gt({ n: "10" }), true, "as numbers, not strings");
      assert.equal(gt({ n: "7" }), false);
      assert.equal(gt({ n: "0010" }), true);
      assert.equal(gt({ n: "ten" }), false, "a label that is no integer never matches");
      assert.equal(gt({}), false, "an absent label never matches");
      assert.equal(labelMatcher("n<9223372036854775807")({ n: "9223372036854775806" }), true, "64-bit exact");
      assert.equal(labelMatcher("n>9223372036854775806")({ n: "9223372036854775807" }), true);
      assert.equal(labelMatcher("n>1")({ n: "99999999999999999999" }), false, "beyond 64 bits is no integer");
    });

    it("reads only the object's own labels: `constructor` is a key like any other", () => {
      assert.equal(labelMatcher("constructor")({}), false);
      assert.equal(labelMatcher("!toString")({}), true);
      assert.equal(labelMatcher({ constructor: "x" })({ constructor: "x" }), true);
    });

    it("takes required labels as equality requirements", () => {
      const m = labelMatcher({ app: "web", tier: "" });
      assert.equal(m({ app: "web", tier: "" }), true);
      assert.equal(m({ app: "web" }), false);
      assert.equal(labelSelectorString({ app: "web", tier: "" }), "app=web,tier=");
      assert.equal(labelSelectorString("a in(b)"), "a in(b)", "a valid string goes to the server as written");
    });
  });
});
