import { labelMatcher, type LabelSelectorInput } from "@tessera/client";

/**
 * Which objects a lister returns: a label selector (a string in the API
 * server's grammar, e.g. `app=web,tier in (a,b)`, or required labels
 * `{ app: "web" }`), matched by @tessera/client's `labelMatcher` as the
 * server would match it, or a predicate on the object.
 */
export type LabelMatch<T> = LabelSelectorInput | ((obj: T) => boolean);

/**
 * A predicate for `match`, or `undefined` to keep everything. Throws
 * `LabelSelectorError` for a selector the API server would refuse.
 */
export function matcherFor<T extends { metadata?: { labels?: Record<string, string> } }>(
  match: LabelMatch<T> | undefined,
): ((obj: T) => boolean) | undefined {
  if (match === undefined) return undefined;
  if (typeof match === "function") return match;
  const matches = labelMatcher(match);
  return (obj) => matches(obj.metadata?.labels ?? {});
}
