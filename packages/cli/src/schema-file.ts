import { readFileSync } from "node:fs";
import { CliError } from "./cli-error.js";
import { checkGroup, checkKind, checkVersion, kindNames, type KindNames } from "./names.js";

/** A JSON Schema node, as structural schemas use them. */
export type SchemaNode = Record<string, unknown>;

/** What the schema's `x-tessera` header says about the kind. */
export interface KindHeader {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural?: string;
  readonly scope: "Namespaced" | "Cluster";
  readonly shortNames?: readonly string[];
  readonly categories?: readonly string[];
  /**
   * `"storage": true`: the version the API server stores (and the hub that
   * the other versions convert through). Needed when a kind has several
   * versions, on exactly one of them; a kind's only version is its storage.
   */
  readonly storage?: boolean;
  /** `"served": false` keeps a version in the CRD without serving it (default true). */
  readonly served?: boolean;
}

/** One kind's schema file, read and checked. */
export interface KindSchema {
  readonly file: string;
  readonly header: KindHeader;
  readonly names: KindNames;
  /** The `openAPIV3Schema` of the CRD: the file without `x-tessera*` annotations. */
  readonly openAPIV3Schema: SchemaNode;
  /** The file as read, annotations included (printer columns, descriptions). */
  readonly raw: SchemaNode;
}

/**
 * Reads `schemas/<kind>.schema.json` (a kind with one version) or
 * `schemas/<kind>.<version>.schema.json` (one version of a kind with
 * several; `groupKindVersions` puts them together). Its
 * `x-tessera` object names the group, version, kind and scope (and, among
 * several versions, `"storage": true` on the stored one); the rest is
 * the structural schema (Kubernetes' OpenAPI v3 subset) of the whole object;
 * a property annotated `"x-tessera-print": "Name"` (or `{ "name", "jsonPath",
 * "priority" }`) becomes a printer column.
 */
export function readKindSchema(file: string): KindSchema {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new CliError(`${file}: not readable JSON: ${(err as Error).message}`);
  }
  if (!isObject(raw)) throw new CliError(`${file}: a schema file holds one JSON object`);
  const header = raw["x-tessera"];
  if (!isObject(header)) {
    throw new CliError(
      `${file}: no "x-tessera" object; it names the kind, e.g. "x-tessera": { "group": "example.com", "version": "v1alpha1", "kind": "Widget", "scope": "Namespaced" }`,
    );
  }
  for (const key of ["group", "version", "kind"] as const) {
    if (typeof header[key] !== "string") throw new CliError(`${file}: x-tessera.${key} must be a string`);
  }
  const scope = header["scope"] ?? "Namespaced";
  if (scope !== "Namespaced" && scope !== "Cluster") {
    throw new CliError(
      `${file}: x-tessera.scope must be "Namespaced" or "Cluster", not ${JSON.stringify(scope)}`,
    );
  }
  for (const key of ["storage", "served"] as const) {
    if (header[key] !== undefined && typeof header[key] !== "boolean")
      throw new CliError(
        `${file}: x-tessera.${key} must be true or false, not ${JSON.stringify(header[key])}`,
      );
  }
  const h: KindHeader = {
    group: header["group"] as string,
    version: header["version"] as string,
    kind: header["kind"] as string,
    scope,
    ...(typeof header["plural"] === "string" ? { plural: header["plural"] } : {}),
    ...(Array.isArray(header["shortNames"]) ? { shortNames: header["shortNames"] as string[] } : {}),
    ...(Array.isArray(header["categories"]) ? { categories: header["categories"] as string[] } : {}),
    ...(typeof header["storage"] === "boolean" ? { storage: header["storage"] } : {}),
    ...(typeof header["served"] === "boolean" ? { served: header["served"] } : {}),
  };
  try {
    checkGroup(h.group);
    checkVersion(h.version);
    checkKind(h.kind);
  } catch (err) {
    throw new CliError(`${file}: ${(err as Error).message}`);
  }
  const named = versionInFileName(file);
  if (named !== undefined && named !== h.version) {
    throw new CliError(
      `${file}: the file is named for version ${named} but its x-tessera.version is ${h.version}; ` +
        `a version's schema is schemas/<kind>.<version>.schema.json, so rename the file or fix the version`,
    );
  }
  const names = kindNames(h.kind, h.plural);
  const openAPIV3Schema = stripAnnotations(raw) as SchemaNode;
  const problems = structuralProblems(openAPIV3Schema, "");
  if (problems.length) {
    throw new CliError(
      `${file}: the schema is not structural, so the API server would refuse the CRD:\n` +
        problems.map((p) => `  - ${p}`).join("\n") +
        "\n(see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#specifying-a-structural-schema)",
    );
  }
  return { file, header: h, names, openAPIV3Schema, raw };
}

/**
 * The version a schema file's name gives, `v1` of `widget.v1.schema.json`;
 * undefined for `widget.schema.json` (a kind with one version).
 */
export function versionInFileName(file: string): string | undefined {
  const base = file.split(/[/\\]/).pop()!;
  return /^[^.]+\.(v[0-9][a-z0-9]*)\.schema\.json$/.exec(base)?.[1];
}

/** The schema without `x-tessera*` keys and JSON Schema bookkeeping the API server does not take. */
function stripAnnotations(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(stripAnnotations);
  if (!isObject(node)) return node;
  const out: SchemaNode = {};
  for (const [key, value] of Object.entries(node)) {
    if (key.startsWith("x-tessera") || key === "$schema" || key === "$id") continue;
    // Property names are data, not keywords: keep them all.
    out[key] =
      key === "properties" && isObject(value) ? mapValues(value, stripAnnotations) : stripAnnotations(value);
  }
  return out;
}

const UNSUPPORTED = [
  "$ref",
  "definitions",
  "$defs",
  "patternProperties",
  "dependencies",
  "id",
  "const",
  "if",
  "then",
  "else",
];

/**
 * Where a schema breaks the structural rules the API server enforces: every
 * node has a type (unless it preserves unknown fields or is int-or-string),
 * `properties` and `additionalProperties` do not meet, `items` is one schema,
 * and no keyword the API server does not support appears. Each problem names
 * its path, e.g. `.properties.spec.properties.size: no type`.
 */
export function structuralProblems(node: SchemaNode, path: string): string[] {
  const problems: string[] = [];
  const at = path || "(root)";
  for (const key of UNSUPPORTED) {
    if (key in node)
      problems.push(`${at}: "${key}" is not supported in a CRD schema; inline the schema instead`);
  }
  const typed = typeof node["type"] === "string" && node["type"] !== "";
  const exempt =
    node["x-kubernetes-int-or-string"] === true || node["x-kubernetes-preserve-unknown-fields"] === true;
  if (!typed && !exempt) {
    problems.push(
      `${at}: no type (every node needs "type", unless it has "x-kubernetes-preserve-unknown-fields": true or "x-kubernetes-int-or-string": true)`,
    );
  }
  if (Array.isArray(node["type"]))
    problems.push(`${at}: "type" must be one string; use "nullable": true for null`);
  if (node["properties"] !== undefined && node["additionalProperties"] !== undefined) {
    problems.push(`${at}: "properties" and "additionalProperties" cannot both be set`);
  }
  if (Array.isArray(node["items"]))
    problems.push(`${at}: "items" must be one schema, not a list (tuples are not supported)`);
  if (node["type"] === "array" && node["items"] === undefined) problems.push(`${at}: an array needs "items"`);
  const properties = node["properties"];
  if (isObject(properties)) {
    for (const [name, sub] of Object.entries(properties)) {
      if (isObject(sub)) problems.push(...structuralProblems(sub, `${path}.properties.${name}`));
      else problems.push(`${path}.properties.${name}: must be a schema object`);
    }
  }
  if (isObject(node["items"])) problems.push(...structuralProblems(node["items"], `${path}.items`));
  if (isObject(node["additionalProperties"])) {
    problems.push(...structuralProblems(node["additionalProperties"], `${path}.additionalProperties`));
  }
  if (path === "" && isObject(properties) && isObject(properties["metadata"])) {
    const meta = properties["metadata"];
    const extra = Object.keys(isObject(meta["properties"]) ? meta["properties"] : {}).filter(
      (k) => k !== "name" && k !== "generateName",
    );
    if (extra.length)
      problems.push(
        `.properties.metadata: only name and generateName may be restricted, not ${extra.join(", ")}`,
      );
  }
  return problems;
}

function mapValues(object: SchemaNode, f: (v: unknown) => unknown): SchemaNode {
  return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, f(v)]));
}

/** Whether `value` is a plain object. */
export function isObject(value: unknown): value is SchemaNode {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
