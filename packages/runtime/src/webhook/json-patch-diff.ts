import type { JsonPatchOperation } from "@tessera/client";

const isMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * The RFC 6902 JSON patch that turns `from` into `to` (JSON values): `add`
 * and `remove` for keys one side lacks, recursion into maps and into arrays
 * of the same length, `replace` for the rest (an array whose length changed
 * is replaced whole, which the API server applies the same way and keeps
 * the patch obviously right). Written here rather than taken from a
 * library: the one well-known diff on npm (fast-json-patch) is CommonJS,
 * unreleased since 2022 and mutates its inputs' copies through an observer
 * API this needs none of; the diff of two plain JSON trees is this much code.
 */
export function jsonPatchDiff(from: unknown, to: unknown, path = ""): JsonPatchOperation[] {
  if (isMap(from) && isMap(to)) {
    const operations: JsonPatchOperation[] = [];
    for (const key of Object.keys(from)) {
      if (from[key] !== undefined && to[key] === undefined) {
        operations.push({ op: "remove", path: `${path}/${escape(key)}` });
      }
    }
    for (const [key, value] of Object.entries(to)) {
      if (value === undefined) continue;
      const at = `${path}/${escape(key)}`;
      if (from[key] === undefined) operations.push({ op: "add", path: at, value });
      else operations.push(...jsonPatchDiff(from[key], value, at));
    }
    return operations;
  }
  if (Array.isArray(from) && Array.isArray(to) && from.length === to.length) {
    return from.flatMap((item: unknown, i) => jsonPatchDiff(item, to[i], `${path}/${i}`));
  }
  // Scalars equal, or a container met something else (another type, an array of another length).
  if (from === to) return [];
  return [{ op: "replace", path, value: to }];
}

/** A JSON pointer token (RFC 6901): `~` and `/` escaped. */
function escape(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}
