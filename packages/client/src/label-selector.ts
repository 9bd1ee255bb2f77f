import { lexLabelSelector, type LabelToken, type LabelTokenKind } from "./label-selector-lexer.js";
import { labelKeyProblems, labelValueProblems } from "./label-syntax.js";

/** A label selector, as a string or as required labels. */
export type LabelSelectorInput = Readonly<Record<string, string>> | string;

/** The operators of label selector requirements, named as the API server names them. */
export type LabelSelectorOperator = "=" | "==" | "!=" | "in" | "notin" | "exists" | "!" | "gt" | "lt";

/** One requirement of a label selector: all of a selector's must hold. */
export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelSelectorOperator;
  /** Sorted and without duplicates; empty for `exists` and `!`, one integer for `gt` and `lt`. */
  readonly values: readonly string[];
}

const GRAMMAR =
  "write requirements joined by commas: key=value, key==value, key!=value, key in (v1,v2), key notin (v1,v2), key, !key, key>integer, key<integer";

/**
 * A label selector the API server would refuse: says what is wrong, where
 * (`offset`, the index in the selector string where the fault starts;
 * undefined for a selector given as required labels), and the grammar.
 */
export class LabelSelectorError extends TypeError {
  override name = "LabelSelectorError";
  constructor(
    /** The selector as given (a required-labels selector as `key=value,...`). */
    readonly selector: string,
    /** Where in `selector` the fault starts, or undefined for required labels. */
    readonly offset: number | undefined,
    problem: string,
  ) {
    const where = offset === undefined ? "" : ` at offset ${offset}`;
    super(`label selector ${JSON.stringify(selector)}${where}: ${problem}; ${GRAMMAR}`);
  }
}

/**
 * The requirements of a label selector, parsed and validated as the API
 * server does (k8s.io/apimachinery/pkg/labels `Parse`, and
 * `ValidatedSelectorFromSet` for required labels): keys are qualified names,
 * values label values, `gt`/`lt` values 64-bit integers; an empty selector
 * has no requirements (matches everything). Throws
 * {@link LabelSelectorError} where the server would answer 400.
 */
export function parseLabelSelector(selector: LabelSelectorInput): readonly LabelRequirement[] {
  if (typeof selector === "string") return new SelectorParser(selector).parse();
  const requirements: LabelRequirement[] = [];
  for (const [key, value] of Object.entries(selector)) {
    const problems = requirementProblems(key, "=", [value]);
    if (problems.length > 0) {
      throw new LabelSelectorError(unvalidatedString(selector), undefined, problems.join("; "));
    }
    requirements.push({ key, operator: "=", values: [value] });
  }
  return requirements.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * `{ app: "web", tier: "db" }` -> `app=web,tier=db`; a string is passed
 * through. Either is validated first ({@link parseLabelSelector}), so a
 * selector the server would refuse fails here with a
 * {@link LabelSelectorError}, as it fails in the cache.
 */
export function labelSelectorString(selector: LabelSelectorInput): string {
  parseLabelSelector(selector);
  return typeof selector === "string" ? selector : unvalidatedString(selector);
}

/**
 * The matcher of a Kubernetes label selector, with the API server's
 * grammar and validation ({@link parseLabelSelector}): it accepts and
 * refuses the selectors the server accepts and refuses, and matches the
 * same labels. Throws {@link LabelSelectorError}.
 */
export function labelMatcher(
  selector: LabelSelectorInput,
): (labels: Readonly<Record<string, string>>) => boolean {
  const tests = parseLabelSelector(selector).map(requirementTest);
  return (labels) => tests.every((test) => test(labels));
}

function unvalidatedString(selector: Readonly<Record<string, string>>): string {
  return Object.entries(selector)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
}

function requirementTest(r: LabelRequirement): (labels: Readonly<Record<string, string>>) => boolean {
  const { key, values } = r;
  // Own properties only: `constructor` or `toString` is a label key like any other.
  const has = (labels: Readonly<Record<string, string>>): boolean => Object.hasOwn(labels, key);
  switch (r.operator) {
    case "=":
    case "==":
    case "in":
      return (labels) => has(labels) && values.includes(labels[key]!);
    case "!=":
    case "notin":
      return (labels) => !has(labels) || !values.includes(labels[key]!);
    case "exists":
      return has;
    case "!":
      return (labels) => !has(labels);
    case "gt":
    case "lt": {
      const bound = parseInt64(values[0]!)!;
      const greater = r.operator === "gt";
      return (labels) => {
        if (!has(labels)) return false;
        const value = parseInt64(labels[key]!);
        if (value === undefined) return false;
        return greater ? value > bound : value < bound;
      };
    }
  }
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Go's `strconv.ParseInt(s, 10, 64)`: an optional sign and decimal digits, in range. */
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n < INT64_MIN || n > INT64_MAX ? undefined : n;
}

/** NewRequirement's checks: what is wrong with this requirement, if anything. */
function requirementProblems(
  key: string,
  operator: LabelSelectorOperator,
  values: readonly string[],
): string[] {
  const problems = labelKeyProblems(key).map((p) => `key ${JSON.stringify(key)}: ${p}`);
  if ((operator === "gt" || operator === "lt") && values.some((v) => parseInt64(v) === undefined)) {
    problems.push(
      `for '${operator === "gt" ? ">" : "<"}' the value must be a 64-bit integer, not ${JSON.stringify(values[0])}`,
    );
  }
  for (const value of values) {
    for (const p of labelValueProblems(value))
      problems.push(`value ${JSON.stringify(value)} of key ${JSON.stringify(key)}: ${p}`);
  }
  return problems;
}

const BINARY_OPERATORS: ReadonlyMap<LabelTokenKind, LabelSelectorOperator> = new Map<
  LabelTokenKind,
  LabelSelectorOperator
>([
  ["in", "in"],
  ["notin", "notin"],
  ["=", "="],
  ["==", "=="],
  ["!=", "!="],
  [">", "gt"],
  ["<", "lt"],
]);

/** Where a keyword may be a key or a value: `in in (in)` is a valid selector. */
type Context = "keyAndOperator" | "values";

/** The API server's recursive-descent parser of label selectors, step for step. */
class SelectorParser {
  private readonly tokens: LabelToken[];
  private position = 0;

  constructor(private readonly selector: string) {
    this.tokens = lexLabelSelector(selector);
  }

  parse(): LabelRequirement[] {
    const requirements: LabelRequirement[] = [];
    for (;;) {
      const next = this.lookahead("values");
      if (next.kind === "end") break;
      if (next.kind !== "identifier" && next.kind !== "!") {
        throw this.error(next, `found ${quote(next)}, expected '!', a key, or the end`);
      }
      requirements.push(this.parseRequirement());
      const after = this.consume("values");
      if (after.kind === "end") break;
      if (after.kind !== ",") throw this.error(after, `found ${quote(after)}, expected ',' or the end`);
      const following = this.lookahead("values");
      if (following.kind !== "identifier" && following.kind !== "!") {
        throw this.error(
          following,
          `found ${quote(following)}, expected a requirement after ',' (empty requirements are not allowed)`,
        );
      }
    }
    // The server sorts requirements by key; matching does not depend on it, printing does.
    return requirements.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  private parseRequirement(): LabelRequirement {
    let token = this.consume("values");
    const start = token;
    let operator: LabelSelectorOperator | undefined;
    if (token.kind === "!") {
      operator = "!";
      token = this.consume("values");
    }
    if (token.kind !== "identifier") throw this.error(token, `found ${quote(token)}, expected a key`);
    const key = token.literal;
    const keyProblems = labelKeyProblems(key);
    if (keyProblems.length > 0) {
      throw this.error(token, `key ${JSON.stringify(key)}: ${keyProblems.join("; ")}`);
    }
    const next = this.lookahead("values").kind;
    if (operator === "!") return this.requirement(start, key, "!", []);
    if (next === "end" || next === ",") return this.requirement(start, key, "exists", []);

    const opToken = this.consume("keyAndOperator");
    operator = BINARY_OPERATORS.get(opToken.kind);
    if (operator === undefined) {
      throw this.error(opToken, `found ${quote(opToken)}, expected one of in, notin, =, ==, !=, >, <`);
    }
    const valuesAt = this.lookahead("values");
    const values = operator === "in" || operator === "notin" ? this.parseValues() : this.parseExactValue();
    return this.requirement(valuesAt, key, operator, [...new Set(values)].sort());
  }

  /** The requirement, once its values pass the server's checks (`at`: where its values start). */
  private requirement(
    at: LabelToken,
    key: string,
    operator: LabelSelectorOperator,
    values: string[],
  ): LabelRequirement {
    const problems = requirementProblems(key, operator, values);
    if (problems.length > 0) throw this.error(at, problems.join("; "));
    return { key, operator, values };
  }

  /** `(a,b)`; `()` and empty items stand for the empty value. */
  private parseValues(): string[] {
    const open = this.consume("values");
    if (open.kind !== "(") throw this.error(open, `found ${quote(open)}, expected '('`);
    const first = this.lookahead("values");
    if (first.kind === ")") {
      this.consume("values");
      return [""];
    }
    if (first.kind !== "identifier" && first.kind !== ",") {
      throw this.error(first, `found ${quote(first)}, expected ',', ')' or a value`);
    }
    const values = this.parseValueList();
    const close = this.consume("values");
    if (close.kind !== ")") throw this.error(close, `found ${quote(close)}, expected ')'`);
    return values;
  }

  private parseValueList(): string[] {
    const values: string[] = [];
    for (;;) {
      const token = this.consume("values");
      if (token.kind === "identifier") {
        values.push(token.literal);
        const next = this.lookahead("values");
        if (next.kind === ",") continue;
        if (next.kind === ")") return values;
        throw this.error(next, `found ${quote(next)}, expected ',' or ')'`);
      }
      if (token.kind !== ",") throw this.error(token, `found ${quote(token)}, expected ',' or a value`);
      if (values.length === 0) values.push(""); // `(,`
      const next = this.lookahead("values");
      if (next.kind === ")") {
        values.push(""); // `,)`
        return values;
      }
      if (next.kind === ",") values.push(""); // `,,`
    }
  }

  /** The one value after `=`, `==`, `!=`, `>`, `<`: empty when the requirement ends there. */
  private parseExactValue(): string[] {
    const next = this.lookahead("values");
    if (next.kind === "end" || next.kind === ",") return [""];
    const token = this.consume("values");
    if (token.kind !== "identifier") throw this.error(token, `found ${quote(token)}, expected a value`);
    return [token.literal];
  }

  private lookahead(context: Context): LabelToken {
    return inContext(this.tokens[Math.min(this.position, this.tokens.length - 1)]!, context);
  }

  private consume(context: Context): LabelToken {
    const token = this.lookahead(context);
    this.position++;
    return token;
  }

  private error(at: LabelToken, problem: string): LabelSelectorError {
    return new LabelSelectorError(this.selector, at.offset, problem);
  }
}

/** Among values, and where a key is expected, `in` and `notin` are plain words. */
function inContext(token: LabelToken, context: Context): LabelToken {
  if (context === "values" && (token.kind === "in" || token.kind === "notin")) {
    return { ...token, kind: "identifier" };
  }
  return token;
}

function quote(token: LabelToken): string {
  return token.kind === "end" ? "the end" : `'${token.literal}'`;
}
