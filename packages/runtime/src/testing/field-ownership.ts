import { jsonEqual, type Json } from "./json-patches.js";

/** One field manager's entry, as in `metadata.managedFields`, with its fields as leaf paths. */
export interface ManagedEntry {
  manager: string;
  operation: "Apply" | "Update";
  apiVersion: string;
  time: string;
  /** `"status"` for writes to the status subresource. */
  subresource: string;
  /** Paths, each `JSON.stringify(path)`: values, and the maps this entry owns as maps. */
  fields: Set<string>;
  /** Whether `managedFields` marks the maps it owns with `.`: updaters' entries, and appliers' on a schemaless kind. */
  marksMaps: boolean;
}

type Path = readonly string[];
type JsonMap = Record<string, Json>;

const isMap = (v: unknown): v is JsonMap => v !== null && typeof v === "object" && !Array.isArray(v);

/** Metadata the server sets; never a field a manager owns. */
const SYSTEM_METADATA = new Set([
  "name",
  "namespace",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "managedFields",
  "selfLink",
]);

/**
 * The fields `object` sets, as paths: every scalar and list (lists are
 * atomic, as in a CRD without `x-kubernetes-list-type: map`), and every map
 * below the top level but `metadata` itself (a manager owns the maps it
 * declares, as the server's field sets do). `scope` keeps `status` paths
 * only (`"status"`), or drops them (`"main"`, for kinds with a status
 * subresource).
 */
export function leafPaths(object: JsonMap, scope: "all" | "main" | "status"): Path[] {
  const out: Path[] = [];
  const walk = (value: Json, path: string[]): void => {
    if (!(path.length === 1 && path[0] === "metadata")) out.push(path);
    if (!isMap(value)) return;
    for (const [key, child] of Object.entries(value)) {
      if (path.length === 1 && path[0] === "metadata" && SYSTEM_METADATA.has(key)) continue;
      walk(child, [...path, key]);
    }
  };
  for (const [key, value] of Object.entries(object)) {
    if (key === "apiVersion" || key === "kind") continue;
    if (scope === "status" && key !== "status") continue;
    if (scope === "main" && key === "status") continue;
    walk(value, [key]);
  }
  return out;
}

/** The value at `path`, or undefined. */
export function valueAt(object: Json | undefined, path: Path): Json | undefined {
  let at: Json | undefined = object;
  for (const key of path) {
    if (!isMap(at)) return undefined;
    at = at[key];
  }
  return at;
}

/** Removes the value at `path`, and the maps it leaves empty. */
export function removeAt(object: JsonMap, path: Path): void {
  const [key, ...rest] = path;
  if (key === undefined) return;
  if (rest.length === 0) {
    delete object[key];
    return;
  }
  const child = object[key];
  if (!isMap(child)) return;
  removeAt(child, rest);
  if (Object.keys(child).length === 0) delete object[key];
}

/** `base` with `config` merged in: maps merged key by key, scalars and lists replaced. */
export function applyMerge(base: Json | undefined, config: Json): Json {
  if (!isMap(config) || !isMap(base)) return config;
  const out: JsonMap = { ...base };
  for (const [key, value] of Object.entries(config)) out[key] = applyMerge(out[key], value);
  return out;
}

/** A path as the server prints it in a conflict: `.spec.data.k`. */
export function printPath(key: string): string {
  return (JSON.parse(key) as string[]).map((p) => `.${p}`).join("");
}

/** A manager as the server names it in a conflict. */
export function printManager(entry: ManagedEntry): string {
  let name = JSON.stringify(entry.manager);
  if (entry.subresource) name += ` with subresource ${JSON.stringify(entry.subresource)}`;
  // The server names an updater by its identifier, which has no time.
  if (entry.operation === "Update") name += ` using ${entry.apiVersion}`;
  return name;
}

const overlaps = (a: Path, b: Path): boolean => {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
};

/**
 * The fields of `config` that another entry owns with a different value in
 * `live`: what a server-side apply without `force` is refused for. Maps are
 * shared (their keys decide); a scalar or list conflicts with what another
 * manager owns at, inside or above it.
 */
export function applyConflicts(
  entries: readonly ManagedEntry[],
  self: ManagedEntry,
  config: JsonMap,
  live: Json | undefined,
  paths: readonly Path[],
): { entry: ManagedEntry; key: string }[] {
  const conflicts: { entry: ManagedEntry; key: string }[] = [];
  const values = paths.filter((p) => !isMap(valueAt(config, p)));
  for (const entry of entries) {
    if (entry === self) continue;
    for (const key of entry.fields) {
      const owned = JSON.parse(key) as string[];
      const ownedIsValue = !isMap(valueAt(live, owned));
      const mine = values.find((p) => overlaps(p, owned) && (p.length <= owned.length || ownedIsValue));
      if (!mine) continue;
      const at = mine.length <= owned.length ? mine : owned;
      if (!jsonEqual(valueAt(live, at), valueAt(config, at))) conflicts.push({ entry, key });
    }
  }
  return conflicts;
}

/** The paths a write changed: scalars and lists that differ, maps that appeared or went away. */
export function changedPaths(before: JsonMap, after: JsonMap, scope: "all" | "main" | "status"): Path[] {
  const seen = new Set<string>();
  const out: Path[] = [];
  for (const path of [...leafPaths(after, scope), ...leafPaths(before, scope)]) {
    const key = JSON.stringify(path);
    if (seen.has(key)) continue;
    seen.add(key);
    const a = valueAt(before, path);
    const b = valueAt(after, path);
    const changed = isMap(a) && isMap(b) ? false : !jsonEqual(a, b);
    if (changed) out.push(path);
  }
  return out;
}

/** The entries as `metadata.managedFields` shows them (`fieldsV1` trees of `f:` keys). */
export function renderManagedFields(entries: readonly ManagedEntry[]): unknown[] {
  return entries
    .filter((e) => e.fields.size > 0)
    .map((e) => {
      const tree: Record<string, unknown> = {};
      const members: Record<string, unknown>[] = [];
      for (const key of e.fields) {
        let at = tree;
        for (const part of JSON.parse(key) as string[]) {
          at = (at[`f:${part}`] ??= {}) as Record<string, unknown>;
        }
        members.push(at);
      }
      if (e.marksMaps) for (const node of members) if (Object.keys(node).length > 0) node["."] = {};
      return {
        manager: e.manager,
        operation: e.operation,
        apiVersion: e.apiVersion,
        time: e.time,
        fieldsType: "FieldsV1",
        fieldsV1: tree,
        ...(e.subresource ? { subresource: e.subresource } : {}),
      };
    });
}
