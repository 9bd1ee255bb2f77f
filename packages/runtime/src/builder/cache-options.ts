import { labelMatcher, type KubeObject, type LabelSelectorInput } from "@tessera/client";
import { CONTROLLER_OWNER_INDEX } from "../reconcile/related-objects.js";

/**
 * An index function: the values an object is filed under (none: not
 * indexed). Read the index with `client.list(kind, { index: { name, value } })`.
 */
export type IndexFunction<T extends KubeObject = KubeObject> = (object: T) => readonly string[];

/**
 * What the manager caches of one kind a controller declares (`for`, `owns`,
 * `watches`): the informer's scope (its LIST and WATCH ask the server for no
 * more), its shape, and its indexes. Absent fields take the manager
 * configuration's (`cache.byKind`, then `cache.namespaces`), then all.
 */
export interface CacheOptions<T extends KubeObject = KubeObject> {
  /**
   * The namespaces to cache (namespaced kinds): one, or several (one
   * informer per namespace; `[]` or absent: all namespaces).
   */
  namespaces?: string | readonly string[];
  /** Only objects whose labels match (`{ app: "web" }` or `"app=web,tier!=db"`). */
  labels?: LabelSelectorInput;
  /** Only objects whose fields match, as a server field selector (`{ "spec.nodeName": "n1" }` or `"status.phase!=Done"`). */
  fields?: Readonly<Record<string, string>> | string;
  /**
   * Cache `PartialObjectMetadata` only (no spec, status or data): the
   * objects the controller sees then carry only `apiVersion`, `kind` and
   * `metadata`. Not for the primary of a `sharded` controller.
   */
  metadataOnly?: boolean;
  /** Applied to every object before it is cached (after managedFields are dropped): trim what reconciles never read. */
  transform?: (object: T) => T;
  /**
   * Named indexes, kept by the cache of the kind (every cache of the kind
   * in the manager has them): `client.list(kind, { index: { name, value } })`
   * reads one. Name an index for the field it indexes (`"spec.secretName"`)
   * and `client.list(kind, { fields: { "spec.secretName": v } })` reads it too.
   */
  indexes?: Readonly<Record<string, IndexFunction<T>>>;
}

/** A namespace name: an RFC 1123 label. */
const NAMESPACE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** One requirement of a field selector: `path=value`, `path==value` or `path!=value`. */
const FIELD_REQUIREMENT = /^([A-Za-z0-9_][A-Za-z0-9_.-]*)\s*(==|=|!=)\s*([^,=!]*)$/;
const FIELD_PATH = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/** The namespaces of `options` as a list (`[]`: all). */
export function namespacesOf(options: Pick<CacheOptions, "namespaces">): readonly string[] {
  const ns = options.namespaces;
  return ns === undefined ? [] : typeof ns === "string" ? [ns] : ns;
}

/** A field selector in the server's syntax. */
export function fieldSelectorString(fields: Readonly<Record<string, string>> | string): string {
  return typeof fields === "string"
    ? fields
    : Object.entries(fields)
        .map(([k, v]) => `${k}=${v}`)
        .join(",");
}

/**
 * What is wrong with `options` as `where` (e.g. `owns(ConfigMap (v1))`)
 * wrote them: one line per mistake, naming the field and how to fix it.
 */
export function cacheOptionProblems(where: string, options: CacheOptions<never>): string[] {
  const problems: string[] = [];
  const ns = options.namespaces;
  if (ns !== undefined) {
    const list: readonly unknown[] = typeof ns === "string" ? [ns] : Array.isArray(ns) ? ns : [ns];
    for (const n of list) {
      if (typeof n !== "string" || n.length > 63 || !NAMESPACE.test(n)) {
        problems.push(
          `${where}: namespaces: ${JSON.stringify(n)} is not a namespace name (lowercase letters, digits and '-', at most 63); for all namespaces leave namespaces out`,
        );
      }
    }
    if (new Set(list).size !== list.length) problems.push(`${where}: namespaces lists a namespace twice`);
  }
  if (options.labels !== undefined) {
    if (typeof options.labels === "string" && options.labels.trim() === "") {
      problems.push(`${where}: labels: an empty selector selects everything; leave labels out instead`);
    } else {
      try {
        labelMatcher(options.labels);
      } catch (error) {
        problems.push(`${where}: labels: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
  if (options.fields !== undefined) {
    const problem = fieldSelectorProblem(options.fields);
    if (problem) problems.push(`${where}: fields: ${problem}`);
  }
  if (options.metadataOnly !== undefined && typeof options.metadataOnly !== "boolean") {
    problems.push(`${where}: metadataOnly must be true or false`);
  }
  if (options.transform !== undefined && typeof options.transform !== "function") {
    problems.push(`${where}: transform must be a function from an object to the object to cache`);
  }
  for (const [name, fn] of Object.entries(options.indexes ?? {})) {
    if (name.trim() === "") {
      problems.push(
        `${where}: indexes: an index name is empty; name it for what it indexes, e.g. "spec.secretName"`,
      );
    }
    if (name === "namespace") {
      problems.push(
        `${where}: indexes: "namespace" is the cache's own index of namespaces; list with { namespace } instead, or choose another name`,
      );
    }
    if (name === CONTROLLER_OWNER_INDEX) {
      problems.push(
        `${where}: indexes: "${name}" is the runtime's index of owned kinds by controller owner (ctx.owned reads it); choose another name`,
      );
    }
    if (typeof fn !== "function") {
      problems.push(
        `${where}: indexes: "${name}" must be a function from an object to the values it is filed under`,
      );
    }
  }
  return problems;
}

function fieldSelectorProblem(fields: Readonly<Record<string, string>> | string): string | undefined {
  if (typeof fields === "string") {
    if (fields.trim() === "") return "an empty selector selects everything; leave fields out instead";
    const bad = fields.split(",").find((part) => !FIELD_REQUIREMENT.test(part.trim()));
    return bad === undefined
      ? undefined
      : `cannot parse "${bad.trim()}" in "${fields}"; write path=value or path!=value, joined by commas (e.g. "status.phase!=Succeeded")`;
  }
  if (fields === null || typeof fields !== "object")
    return "must be an object of field paths and values, or a selector string";
  const entries = Object.entries(fields);
  if (entries.length === 0) return "an empty selector selects everything; leave fields out instead";
  for (const [path, value] of entries) {
    if (!FIELD_PATH.test(path)) return `"${path}" is not a field path (e.g. "spec.nodeName")`;
    if (typeof value !== "string" || /[,=!]/.test(value)) {
      return `the value of "${path}" must be a string without ',', '=' or '!'`;
    }
  }
  return undefined;
}
