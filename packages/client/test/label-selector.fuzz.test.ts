import { strict as assert } from "node:assert";
import fc from "fast-check";
import { fuzz } from "@tessera/core/testing/fuzz";
import { labelMatcher, LabelSelectorError, parseLabelSelector } from "../src/index.js";
import { selector } from "./label-selector-arbitraries.js";

// A label selector is user input that reaches every cache and lister: whatever
// the text, labelMatcher returns a matcher or throws a LabelSelectorError that
// points inside the selector, and a selector it accepts means the same after
// its requirements are written out again (label-selector-parity.test.ts
// checks the accepting and refusing against kube-apiserver itself).

function parsed(selector: string): ReturnType<typeof parseLabelSelector> | undefined {
  try {
    return parseLabelSelector(selector);
  } catch (error) {
    assert.ok(error instanceof LabelSelectorError, `not a LabelSelectorError: ${String(error)}`);
    assert.equal(error.selector, selector);
    assert.ok(error.offset !== undefined && error.offset >= 0 && error.offset <= selector.length);
    assert.match(
      error.message,
      /^label selector ".*" at offset \d+: .+; write requirements joined by commas/s,
    );
    return undefined;
  }
}

/** The requirements written back in the grammar. */
function written(requirements: ReturnType<typeof parseLabelSelector>): string {
  return requirements
    .map(({ key, operator, values }) => {
      switch (operator) {
        case "exists":
          return key;
        case "!":
          return `!${key}`;
        case "in":
        case "notin":
          return `${key} ${operator} (${values.join(",")})`;
        case "gt":
          return `${key}>${values[0]}`;
        case "lt":
          return `${key}<${values[0]}`;
        case "=":
        case "==":
        case "!=":
          return `${key}${operator}${values[0]}`;
      }
    })
    .join(",");
}

describe("label selector (fuzz)", () => {
  it("any text: a matcher or a LabelSelectorError pointing inside it", () => {
    fuzz(
      "label selector, arbitrary text",
      fc.string({ unit: "binary", maxLength: 40 }),
      (s) => {
        parsed(s);
      },
      2_000,
    );
  });

  it("selectors biased to the grammar's edges: accepted ones read the same written out again", () => {
    fuzz(
      "label selector, edges of the grammar",
      selector,
      (s) => {
        const requirements = parsed(s);
        if (requirements === undefined) return;
        assert.deepEqual(parseLabelSelector(written(requirements)), requirements);
        labelMatcher(s)({ a: "1", b: "" });
      },
      3_000,
    );
  });
});
