// The tokens of a label selector, cut as the API server's lexer cuts them
// (k8s.io/apimachinery/pkg/labels/selector.go), so both read one string the
// same way: `in(` is `in` then `(`, `a!=b` is `a`, `!=`, `b`, and any run of
// other characters up to whitespace or a symbol is one identifier.

/** What a token is: a symbol, a keyword, an identifier (key or value), or the end. */
export type LabelTokenKind =
  "identifier" | "end" | "(" | ")" | "," | "!" | "=" | "==" | "!=" | ">" | "<" | "in" | "notin";

/** One token and where it starts in the selector. */
export interface LabelToken {
  readonly kind: LabelTokenKind;
  readonly literal: string;
  readonly offset: number;
}

const LITERALS: ReadonlyMap<string, LabelTokenKind> = new Map<string, LabelTokenKind>(
  [")", ",", "!", "==", "=", ">", "in", "<", "!=", "notin", "("].map((s) => [s, s as LabelTokenKind]),
);

// The server reads a NUL byte as the end of input (its lexer returns 0 there).
const END = "\0";

const isWhitespace = (c: string): boolean => c === " " || c === "\t" || c === "\r" || c === "\n";
const isSymbol = (c: string): boolean =>
  c === "=" || c === "!" || c === "(" || c === ")" || c === "," || c === ">" || c === "<";

/** The tokens of `selector`, ending with one of kind `end`. */
export function lexLabelSelector(selector: string): LabelToken[] {
  let pos = 0;
  const read = (): string => (pos < selector.length ? selector[pos++]! : END);
  const unread = (): void => {
    pos--;
  };
  const tokens: LabelToken[] = [];
  for (;;) {
    let offset = pos;
    let c = read();
    while (isWhitespace(c)) {
      offset = pos;
      c = read();
    }
    if (c === END) {
      tokens.push({ kind: "end", literal: "", offset });
      return tokens;
    }
    unread();
    let buffer = "";
    if (isSymbol(c)) {
      // The longest run of symbols that is still a token: `!=` and `==`, `!(` is `!` then `(`.
      let found: LabelTokenKind | undefined;
      let literal = "";
      for (;;) {
        const s = read();
        if (s === END) break;
        if (!isSymbol(s)) {
          unread();
          break;
        }
        buffer += s;
        const kind = LITERALS.get(buffer);
        if (kind !== undefined) {
          found = kind;
          literal = buffer;
        } else if (found !== undefined) {
          unread();
          break;
        }
      }
      // Every single symbol is a token, so `found` is set.
      tokens.push({ kind: found!, literal, offset });
    } else {
      for (;;) {
        const s = read();
        if (s === END) break;
        if (isSymbol(s) || isWhitespace(s)) {
          unread();
          break;
        }
        buffer += s;
      }
      const kind = LITERALS.get(buffer);
      tokens.push({ kind: kind ?? "identifier", literal: buffer, offset });
    }
  }
}
