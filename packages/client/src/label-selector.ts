/** A label selector, as a string or as required labels. */
export type LabelSelectorInput = Readonly<Record<string, string>> | string;

/** A label selector string the user wrote wrongly: says where and what is allowed. */
export class LabelSelectorError extends TypeError {
  override name = "LabelSelectorError";
}

type Requirement = (labels: Readonly<Record<string, string>>) => boolean;

/** `{ app: "web", tier: "db" }` -> `app=web,tier=db`; a string is passed through. */
export function labelSelectorString(selector: LabelSelectorInput): string {
  if (typeof selector === "string") return selector;
  return Object.entries(selector)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
}

const KEY = String.raw`[A-Za-z0-9][-A-Za-z0-9_./]*`;
const VALUE = String.raw`[A-Za-z0-9]?(?:[-A-Za-z0-9_.]*[A-Za-z0-9])?`;
const EQUALITY = new RegExp(String.raw`^(${KEY})\s*(==|=|!=)\s*(${VALUE})$`);
const SET = new RegExp(String.raw`^(${KEY})\s+(in|notin)\s+\(([^)]*)\)$`);
const EXISTS = new RegExp(String.raw`^(!?)\s*(${KEY})$`);

/**
 * The matcher of a Kubernetes label selector, with the API server's
 * grammar: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`,
 * joined by commas (all must hold). Throws {@link LabelSelectorError}.
 */
export function labelMatcher(
  selector: LabelSelectorInput,
): (labels: Readonly<Record<string, string>>) => boolean {
  if (typeof selector !== "string") {
    const wanted = Object.entries(selector);
    return (labels) => wanted.every(([k, v]) => labels[k] === v);
  }
  const requirements: Requirement[] = [];
  for (const part of splitRequirements(selector)) {
    const text = part.trim();
    if (text === "") continue;
    let m = EQUALITY.exec(text);
    if (m) {
      const [, key, op, value] = m as unknown as [string, string, string, string];
      requirements.push(op === "!=" ? (l) => l[key] !== value : (l) => l[key] === value);
      continue;
    }
    m = SET.exec(text);
    if (m) {
      const [, key, op, list] = m as unknown as [string, string, string, string];
      const values = new Set(list.split(",").map((v) => v.trim()));
      requirements.push(
        op === "in"
          ? (l) => l[key] !== undefined && values.has(l[key])
          : (l) => l[key] === undefined || !values.has(l[key]),
      );
      continue;
    }
    m = EXISTS.exec(text);
    if (m) {
      const [, not, key] = m as unknown as [string, string, string];
      requirements.push(not ? (l) => !(key in l) : (l) => key in l);
      continue;
    }
    throw new LabelSelectorError(
      `label selector "${selector}": cannot parse "${text}"; write key=value, key!=value, key in (a,b), key notin (a), key or !key, joined by commas`,
    );
  }
  return (labels) => requirements.every((r) => r(labels));
}

/** Splits on the commas between requirements, not those inside `( )`. */
function splitRequirements(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "," && depth === 0) {
      parts.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(selector.slice(start));
  return parts;
}
