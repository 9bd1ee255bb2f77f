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

/**
 * How server-side apply merges a list (`x-kubernetes-list-type`): replaced
 * whole (`atomic`, the default), merged by the values of its `keys` (`map`,
 * with `x-kubernetes-list-map-keys`; `defaults` are the schema's defaults of
 * key fields, which identify an entry that omits them), or merged by value
 * (`set`).
 */
export type ListType =
  | { readonly type: "atomic" }
  | {
      readonly type: "map";
      readonly keys: readonly string[];
      readonly defaults?: Readonly<JsonMap>;
      /** Entries owned and replaced whole (`x-kubernetes-map-type: atomic` on the items, as owner references). */
      readonly atomicEntries?: boolean;
    }
  | { readonly type: "set" };

/**
 * The list type at a schema path (`spec.template.spec.containers`: map keys
 * joined by `.`, list entries left out); undefined for an atomic list. At
 * the path of a map, `atomic` says the map is atomic.
 */
export type ListTypes = (schemaPath: string) => ListType | undefined;

/**
 * Paths are map keys, and list entries marked by this prefix: `\0k:{"name":"a"}`
 * for an entry of a list-map (its keys, sorted), `\0v:"x"` for a set's value:
 * the server's own path elements, which `managedFields` shows as they are.
 */
const ELEMENT = "\u0000";
const isElement = (segment: string): boolean => segment.startsWith(ELEMENT);
const schemaPathOf = (path: Path): string => path.filter((s) => !isElement(s)).join(".");
const ATOMIC: ListType = { type: "atomic" };
const listTypeAt = (types: ListTypes | undefined, path: Path): ListType =>
  types?.(schemaPathOf(path)) ?? ATOMIC;

/** The path element of `item` in a list of `type`; undefined in an atomic list or for an entry of a list-map that is no map. */
function elementOf(type: ListType, item: Json): string | undefined {
  if (type.type === "set") return `${ELEMENT}v:${JSON.stringify(item)}`;
  if (type.type !== "map" || !isMap(item)) return undefined;
  const key: JsonMap = {};
  for (const name of [...type.keys].sort()) {
    const value = item[name] ?? type.defaults?.[name];
    if (value !== undefined) key[name] = value;
  }
  return `${ELEMENT}k:${JSON.stringify(key)}`;
}

/** The child of `value` (at `path`) named by `segment`: a map's key, or a list's entry. */
function childOf(value: Json | undefined, path: Path, segment: string, types?: ListTypes): Json | undefined {
  if (isElement(segment)) {
    if (!Array.isArray(value)) return undefined;
    const type = listTypeAt(types, path);
    return value.find((item) => elementOf(type, item) === segment);
  }
  return isMap(value) ? value[segment] : undefined;
}

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
 * The fields `object` sets, as paths: every scalar and atomic list, every
 * list-map and set with each entry (and its fields) or value (as `types`
 * says; every list is atomic without it), and every map below the top
 * level but `metadata` itself (a manager owns the maps it declares, as the
 * server's field sets do). `scope` keeps `status` paths only
 * (`"status"`), or drops them (`"main"`, for kinds with a status
 * subresource).
 */
export function leafPaths(object: JsonMap, scope: "all" | "main" | "status", types?: ListTypes): Path[] {
  const out: Path[] = [];
  const walk = (value: Json, path: string[]): void => {
    const type = Array.isArray(value) && value.length > 0 ? listTypeAt(types, path) : ATOMIC;
    if (Array.isArray(value) && type.type !== "atomic") {
      // The list itself, which an updater owns (an applier only its entries or values).
      out.push(path);
      for (const item of value) {
        const segment = elementOf(type, item);
        if (segment === undefined) continue;
        const at = [...path, segment];
        out.push(at);
        if (isMap(item) && !(type.type === "map" && type.atomicEntries))
          for (const [key, child] of Object.entries(item)) walk(child, [...at, key]);
      }
      return;
    }
    if (!(path.length === 1 && path[0] === "metadata")) out.push(path);
    if (!isMap(value) || isAtomicMap(types, path)) return;
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

/** Whether the path names a list-map's entry (its last element is `k:{...}`). */
export function isListEntry(path: Path): boolean {
  const last = path[path.length - 1];
  return last !== undefined && last.startsWith(`${ELEMENT}k:`);
}

/** Whether `field` is one of the keys that the list-map entry `element` (a `k:{...}` path element) is named by. */
export function isKeyOf(element: string, field: string): boolean {
  return Object.hasOwn(JSON.parse(element.slice(3)) as JsonMap, field);
}

/** The value at `path`, or undefined. */
export function valueAt(object: Json | undefined, path: Path, types?: ListTypes): Json | undefined {
  let at: Json | undefined = object;
  for (let i = 0; i < path.length && at !== undefined; i++)
    at = childOf(at, path.slice(0, i), path[i]!, types);
  return at;
}

/**
 * Removes the value at `path`, and the maps it leaves empty, and a list it
 * leaves empty of entries; an entry of a list-map stays until its own path
 * is removed.
 */
export function removeAt(object: JsonMap, path: Path, types?: ListTypes): void {
  removeIn(object, path, types, []);
}

function removeIn(parent: Json, path: Path, types: ListTypes | undefined, prefix: Path): void {
  const [segment, ...rest] = path;
  if (segment === undefined) return;
  if (isElement(segment)) {
    if (!Array.isArray(parent)) return;
    const type = listTypeAt(types, prefix);
    const i = parent.findIndex((item) => elementOf(type, item) === segment);
    if (i < 0) return;
    if (rest.length === 0) parent.splice(i, 1);
    else removeIn(parent[i]!, rest, types, [...prefix, segment]);
    return;
  }
  if (!isMap(parent)) return;
  if (rest.length === 0) {
    delete parent[segment];
    return;
  }
  const child = parent[segment];
  if (child === undefined) return;
  removeIn(child, rest, types, [...prefix, segment]);
  const emptied = isMap(child) ? Object.keys(child).length === 0 : Array.isArray(child) && child.length === 0;
  if (emptied) delete parent[segment];
}

/**
 * `base` with `config` merged in: maps merged key by key, list-maps by
 * their keys (an entry merged into the one it names, or added at the end),
 * sets by value, scalars and atomic lists replaced.
 */
export function applyMerge(base: Json | undefined, config: Json, types?: ListTypes, path: Path = []): Json {
  if (Array.isArray(config) && Array.isArray(base)) {
    const type = listTypeAt(types, path);
    return type.type === "atomic" ? config : mergeList(type, base, config, types, path);
  }
  if (!isMap(config) || !isMap(base) || isAtomicMap(types, path)) return config;
  const out: JsonMap = { ...base };
  for (const [key, value] of Object.entries(config)) {
    out[key] = applyMerge(out[key], value, types, [...path, key]);
  }
  return out;
}

/**
 * A list-map or set merged as the server merges it: entries both lists
 * hold come in the configuration's order, each merged; an entry only the
 * live list holds keeps its place before them, one only the configuration
 * holds comes where the configuration puts it.
 */
function mergeList(
  type: ListType,
  base: Json[],
  config: Json[],
  types: ListTypes | undefined,
  path: Path,
): Json[] {
  const keyOf = (item: Json): string => elementOf(type, item) ?? JSON.stringify(item);
  const lhs = base.map(keyOf);
  const rhs = config.map(keyOf);
  const inLhs = new Map(lhs.map((k, i) => [k, i]));
  const inRhs = new Set(rhs);
  const shared = lhs.filter((k) => inRhs.has(k));
  const merged = new Set<string>();
  const out: Json[] = [];
  const take = (r: number): void => {
    const k = rhs[r]!;
    merged.add(k);
    const l = inLhs.get(k);
    out.push(
      l === undefined || type.type !== "map" || type.atomicEntries
        ? config[r]!
        : applyMerge(base[l], config[r]!, types, [...path, k]),
    );
  };
  let next = 0;
  let l = 0;
  let r = 0;
  while (l < lhs.length || r < rhs.length) {
    if (l < lhs.length && r < rhs.length) {
      if (lhs[l] === rhs[r]) {
        take(r);
        l++;
        r++;
        next++;
        continue;
      }
      // A shared entry the configuration wants later: it comes when the configuration reaches it.
      if (inRhs.has(lhs[l]!) && shared[next] !== undefined && shared[next] !== lhs[l]) {
        l++;
        continue;
      }
    }
    if (l < lhs.length) {
      if (!inRhs.has(lhs[l]!)) {
        out.push(base[l]!);
        l++;
        continue;
      }
      if (merged.has(lhs[l]!) || r >= rhs.length) {
        l++;
        continue;
      }
    }
    if (r < rhs.length) {
      take(r);
      if (shared[next] === rhs[r]) next++;
      r++;
    }
  }
  return out;
}

/** Whether `value` at `path` is owned field by field: a map that is not atomic, a list-map or a set. */
export function isGranular(value: Json | undefined, path: Path, types?: ListTypes): boolean {
  if (isMap(value)) {
    if (isListEntry(path)) {
      const list = listTypeAt(types, path.slice(0, -1));
      return !(list.type === "map" && list.atomicEntries);
    }
    return !isAtomicMap(types, path);
  }
  return Array.isArray(value) && listTypeAt(types, path).type !== "atomic";
}

/** Whether the map at `path` is atomic (`x-kubernetes-map-type: atomic`, as a Deployment's `spec.selector`): owned and replaced whole. */
export function isAtomicMap(types: ListTypes | undefined, path: Path): boolean {
  return types?.(schemaPathOf(path))?.type === "atomic";
}

/** A path as the server prints it in a conflict: `.spec.data.k`, `.spec.containers[name="c"].image`, `.spec.tags[="x"]`. */
export function printPath(key: string): string {
  return (JSON.parse(key) as string[])
    .map((p) => {
      if (p.startsWith(`${ELEMENT}k:`)) {
        const fields = Object.entries(JSON.parse(p.slice(3)) as JsonMap);
        return `[${fields.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(",")}]`;
      }
      if (p.startsWith(`${ELEMENT}v:`)) return `[=${p.slice(3)}]`;
      return `.${p}`;
    })
    .join("");
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
  types?: ListTypes,
): { entry: ManagedEntry; key: string }[] {
  const conflicts: { entry: ManagedEntry; key: string }[] = [];
  const values = paths.filter((p) => !isGranular(valueAt(config, p, types), p, types));
  for (const entry of entries) {
    if (entry === self) continue;
    for (const key of entry.fields) {
      const owned = JSON.parse(key) as string[];
      const ownedIsValue = !isGranular(valueAt(live, owned, types), owned, types);
      const mine = values.find((p) => overlaps(p, owned) && (p.length <= owned.length || ownedIsValue));
      if (!mine) continue;
      const at = mine.length <= owned.length ? mine : owned;
      if (!jsonEqual(valueAt(live, at, types), valueAt(config, at, types))) conflicts.push({ entry, key });
    }
  }
  return conflicts;
}

/** The paths a write changed: scalars and lists that differ, maps that appeared or went away. */
export function changedPaths(
  before: JsonMap,
  after: JsonMap,
  scope: "all" | "main" | "status",
  types?: ListTypes,
): Path[] {
  const seen = new Set<string>();
  const out: Path[] = [];
  for (const path of [...leafPaths(after, scope, types), ...leafPaths(before, scope, types)]) {
    const key = JSON.stringify(path);
    if (seen.has(key)) continue;
    seen.add(key);
    const a = valueAt(before, path, types);
    const b = valueAt(after, path, types);
    const changed =
      isGranular(a, path, types) && isGranular(b, path, types) && Array.isArray(a) === Array.isArray(b)
        ? false
        : !jsonEqual(a, b);
    if (changed) out.push(path);
  }
  return out;
}

/** The entries as `metadata.managedFields` shows them (`fieldsV1` trees of `f:`, `k:` and `v:` keys). */
export function renderManagedFields(entries: readonly ManagedEntry[]): unknown[] {
  return entries
    .filter((e) => e.fields.size > 0)
    .map((e) => {
      const tree: Record<string, unknown> = {};
      const members: Record<string, unknown>[] = [];
      const listEntries: Record<string, unknown>[] = [];
      for (const key of e.fields) {
        let at = tree;
        const path = JSON.parse(key) as string[];
        for (const part of path) {
          at = (at[isElement(part) ? part.slice(1) : `f:${part}`] ??= {}) as Record<string, unknown>;
        }
        members.push(at);
        if (isListEntry(path)) listEntries.push(at);
      }
      if (e.marksMaps) for (const node of members) if (Object.keys(node).length > 0) node["."] = {};
      // An owned list-map entry is marked for appliers too, as the server marks it (an atomic one has no fields to mark).
      for (const node of listEntries) if (Object.keys(node).length > 0) node["."] = {};
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
