/**
 * Which objects a lister returns: every label given must be present with
 * exactly that value (a `matchLabels` selector), or a predicate on the object.
 */
export type LabelMatch<T> = Readonly<Record<string, string>> | ((obj: T) => boolean);

/** A predicate for `match`, or `undefined` to keep everything. */
export function matcherFor<T extends { metadata?: { labels?: Record<string, string> } }>(
  match: LabelMatch<T> | undefined,
): ((obj: T) => boolean) | undefined {
  if (match === undefined) return undefined;
  if (typeof match === "function") return match;
  const wanted = Object.entries(match);
  if (wanted.length === 0) return undefined;
  return (obj) => {
    const labels = obj.metadata?.labels;
    if (!labels) return false;
    for (const [k, v] of wanted) if (labels[k] !== v) return false;
    return true;
  };
}
