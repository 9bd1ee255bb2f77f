import { TOP_BOUND_LITERAL } from "./hash-bound.js";
import type { HashRange } from "./hash-range.js";
import { isShardField, SHARD_FIELDS, type ShardField } from "./shard-field.js";
import { ShardSelectorError } from "./shard-selector-error.js";

/** A selector's parts as read from text. */
export interface ParsedShardSelector {
  readonly field: ShardField;
  readonly ranges: readonly HashRange[];
}

const FUNCTION = "shardRange";
const HEX16 = /^0x[0-9a-f]{16}$/;

/**
 * Reads a shard selector in the grammar the API server accepts:
 *
 * ```
 * selector := term ( "||" term )*
 * term     := "shardRange" "(" field "," bound "," bound ")"
 * field    := "object.metadata.uid" | "object.metadata.namespace"
 * bound    := "'0x" 16 lowercase hex digits "'" | "'0x10000000000000000'"
 * ```
 *
 * Whitespace between tokens is allowed, as the server's CEL parser allows it;
 * everything else the server would refuse (which it answers with HTTP 500) is
 * refused here with a {@link ShardSelectorError} that says what and where.
 * All terms must use the same field and each must have start < end.
 */
export function parseShardSelector(text: string): ParsedShardSelector {
  return new Parser(text).selector();
}

class Parser {
  private pos = 0;

  constructor(private readonly text: string) {}

  selector(): ParsedShardSelector {
    this.skipSpace();
    if (this.pos === this.text.length)
      this.fail("the selector is empty (omit the parameter to list everything)");
    const ranges: HashRange[] = [];
    let field: ShardField | undefined;
    for (;;) {
      const termStart = this.pos;
      const term = this.term();
      if (field === undefined) field = term.field;
      else if (term.field !== field) {
        this.fail(`all terms must use the same field, got ${field} and ${term.field}`, termStart);
      }
      ranges.push(term.range);
      this.skipSpace();
      if (this.pos === this.text.length) break;
      if (this.text.startsWith("||", this.pos)) {
        this.pos += 2;
        this.skipSpace();
        continue;
      }
      if (this.text.startsWith("&&", this.pos)) this.fail("'&&' is not supported, only '||' joins terms");
      this.fail(`expected ' || ' or the end of the selector, found ${this.describeHere()}`);
    }
    return { field, ranges };
  }

  private term(): { field: ShardField; range: HashRange } {
    if (!this.text.startsWith(FUNCTION, this.pos)) {
      const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.text.slice(this.pos))?.[0];
      if (word !== undefined && word !== FUNCTION) {
        this.fail(`unsupported function ${JSON.stringify(word)}, only shardRange() is allowed`);
      }
      this.fail(`expected shardRange(, found ${this.describeHere()}`);
    }
    this.pos += FUNCTION.length;
    this.skipSpace();
    this.expect("(");
    this.skipSpace();
    const field = this.field();
    this.skipSpace();
    this.expect(",");
    this.skipSpace();
    const startPos = this.pos;
    const start = this.bound("start");
    this.skipSpace();
    this.expect(",");
    this.skipSpace();
    const end = this.bound("end");
    this.skipSpace();
    if (this.peek() === ",") this.fail("shardRange() takes exactly 3 arguments: field, start, end");
    this.expect(")");
    if (start.value >= end.value) {
      this.fail(`range start ${start.literal} must be less than end ${end.literal}`, startPos);
    }
    return { field, range: { start: start.value, end: end.value } };
  }

  private field(): ShardField {
    const at = this.pos;
    const path = /^[A-Za-z_][A-Za-z0-9_]*(\s*\.\s*[A-Za-z_][A-Za-z0-9_]*)*/.exec(this.text.slice(at))?.[0];
    if (path === undefined) {
      this.fail(`expected a field path (${SHARD_FIELDS.join(" or ")}), found ${this.describeHere()}`);
    }
    const normalized = path.replace(/\s+/g, "");
    if (!isShardField(normalized)) {
      this.fail(
        `unsupported field path ${JSON.stringify(normalized)}, supported: ${SHARD_FIELDS.join(", ")}`,
        at,
      );
    }
    this.pos += path.length;
    return normalized;
  }

  private bound(which: "start" | "end"): { value: bigint; literal: string } {
    const at = this.pos;
    const quote = this.peek();
    if (quote === '"') this.fail(`${which} bound must be single-quoted ('0x...'), not double-quoted`);
    if (quote !== "'") this.fail(`${which} bound must be a single-quoted string like '0x0000000000000000'`);
    const close = this.text.indexOf("'", at + 1);
    if (close < 0) this.fail(`${which} bound has no closing quote`);
    const literal = this.text.slice(at + 1, close);
    if (!literal.startsWith("0x"))
      this.fail(`${which} bound ${JSON.stringify(literal)} must start with 0x`, at);
    const digits = literal.slice(2);
    const bad = /[^0-9a-f]/.exec(digits);
    if (bad) {
      const hint = /[A-F]/.test(bad[0]) ? " (hex digits must be lowercase)" : "";
      this.fail(`${which} bound ${JSON.stringify(literal)} has invalid hex character '${bad[0]}'${hint}`, at);
    }
    if (literal !== TOP_BOUND_LITERAL && !HEX16.test(literal)) {
      const hint =
        digits.length > 0 && digits.length < 16
          ? ` (did you mean '0x${digits.padStart(16, "0")}'?)`
          : digits.length === 17
            ? ` (the only 17-digit bound is '${TOP_BOUND_LITERAL}' = 2^64)`
            : "";
      this.fail(`${which} bound '${literal}' must have exactly 16 hex digits after 0x${hint}`, at);
    }
    this.pos = close + 1;
    return { value: BigInt(literal), literal: `'${literal}'` };
  }

  private expect(token: string): void {
    if (!this.text.startsWith(token, this.pos))
      this.fail(`expected '${token}', found ${this.describeHere()}`);
    this.pos += token.length;
  }

  private peek(): string | undefined {
    return this.text[this.pos];
  }

  private skipSpace(): void {
    while (this.pos < this.text.length && /[ \t\r\n]/.test(this.text[this.pos]!)) this.pos++;
  }

  private describeHere(): string {
    if (this.pos >= this.text.length) return "the end of the selector";
    return JSON.stringify(this.text.slice(this.pos, this.pos + 12));
  }

  private fail(problem: string, at: number = this.pos): never {
    throw new ShardSelectorError(problem, this.text, at);
  }
}
