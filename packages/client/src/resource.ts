import type { KubeObject } from "./kube-object.js";

/** Whether a resource's objects live in namespaces (`Namespaced`) or not (`Cluster`), as a CRD's `spec.scope` says. */
export type ResourceScope = "Namespaced" | "Cluster";

/**
 * The key of the phantom member of {@link Resource}. Never set at runtime:
 * it only carries the object type of a handle.
 */
declare const resourceType: unique symbol;

/**
 * A typed handle on one Kubernetes resource (one collection of the API):
 * where it lives in the API, what its objects are called, and, in its type
 * parameter, what they look like. Everything that lists, watches or caches a
 * collection takes one and infers the object type from it:
 * `new KubeListerWatcher(kc, ConfigMaps)` is a `KubeListerWatcher<V1ConfigMap>`.
 *
 * Ready handles for the built-in resources are exported (`ConfigMaps`,
 * `Pods`, `Deployments`, ...); {@link defineResource} makes one for any
 * other, custom resources included. Handles are frozen.
 *
 * A `Resource<Sub>` is a `Resource<Base>` when every field `Base` declares is
 * one `Sub` has, with a compatible type: every handle is a `Resource` (of
 * {@link KubeObject}), but a `Resource<V1Pod>` is not a `Resource<V1ConfigMap>`.
 */
export interface Resource<T extends KubeObject = KubeObject> {
  /** API group; `""` for the core group (`/api/v1`). */
  readonly group: string;
  /** API version within the group, e.g. `v1`, `v1beta1`. */
  readonly version: string;
  /** The kind of its objects, e.g. `ConfigMap` (owner references and events name it). */
  readonly kind: string;
  /** The resource's plural name, as in its URL path, e.g. `configmaps`. */
  readonly plural: string;
  /** Whether its objects live in namespaces. */
  readonly scope: ResourceScope;
  /** `group/version`, or `version` alone for the core group: `v1`, `apps/v1`. */
  readonly apiVersion: string;
  /**
   * Phantom: never present. Client-node's models have only optional fields
   * that overlap, so `V1Pod` and `V1ConfigMap` are assignable to each other
   * and a plain `T` (or `(t: T) => T`) here would not tell their handles
   * apart: TypeScript compares the type arguments and finds them related.
   * A mapped type that removes optionality (`-?`) makes TypeScript compare
   * the handles member by member instead, where `V1ConfigMap`'s then
   * required `data` is missing from `V1Pod`'s. `NonNullable` keeps a
   * generic `Resource<T>` a `Resource` (of {@link KubeObject}).
   */
  readonly [resourceType]?: { [K in keyof T]-?: NonNullable<T[K]> };
}

/** What {@link defineResource} needs to know of a resource. */
export interface ResourceSpec {
  /** API group, `""` for the core group; lowercase, e.g. `apps`, `example.com`. */
  group: string;
  /** API version, e.g. `v1`, `v1alpha1`. */
  version: string;
  /** The kind, in PascalCase, e.g. `Widget`. */
  kind: string;
  /** The plural, lowercase, as in the URL path, e.g. `widgets`. */
  plural: string;
  /** `Namespaced` or `Cluster`. */
  scope: ResourceScope;
}

/** A lowercase DNS-1123 subdomain: what API group names are. */
const GROUP = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** A lowercase DNS-1035 label: what versions are (`v1`, `v1beta1`). */
const VERSION = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
/** A lowercase DNS-1123 label: what resource names in URLs are. */
const PLURAL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** PascalCase identifier: what kinds are. */
const KIND = /^[A-Z][A-Za-z0-9]*$/;

const SPEC_FIELDS: ReadonlySet<string> = new Set(["group", "version", "kind", "plural", "scope"]);

/**
 * Raised by {@link defineResource} for a spec that cannot name a resource,
 * with every problem found (the field, its value, the rule and the fix), and
 * by `KubeListerWatcher` for something that is not a {@link Resource}
 * handle. A `TypeError`: it is a mistake in the program, not in the cluster.
 */
export class ResourceDefinitionError extends TypeError {
  override name = "ResourceDefinitionError";
}

/**
 * A handle on a resource that has no ready one, e.g. a custom resource:
 *
 * ```ts
 * interface Widget extends KubeObject { spec?: { size?: number } }
 * const Widgets = defineResource<Widget>({
 *   group: "example.com", version: "v1", kind: "Widget", plural: "widgets", scope: "Namespaced",
 * });
 * ```
 *
 * The type argument is what its objects look like; it is not checked
 * against the server. The names are checked much as the API server checks a
 * CRD's: a {@link ResourceDefinitionError} says what is wrong, and how to
 * fix it, for a spec that cannot name a resource (an empty or misspelled
 * field, an uppercase plural, a group with its version in it, an unknown
 * scope, a field that is not part of the spec). The handle is frozen.
 */
export function defineResource<T extends KubeObject = KubeObject>(spec: ResourceSpec): Resource<T> {
  const problems = specProblems(spec);
  if (problems.length > 0) {
    throw new ResourceDefinitionError(`defineResource(${specName(spec)}): ${problems.join("; ")}`);
  }
  const { group, version, kind, plural, scope } = spec;
  return Object.freeze({
    group,
    version,
    kind,
    plural,
    scope,
    apiVersion: group === "" ? version : `${group}/${version}`,
  });
}

/** Every way `spec` fails to name a resource, each with its fix. */
function specProblems(spec: ResourceSpec): string[] {
  if (spec === null || typeof spec !== "object") {
    return ["the spec must be an object { group, version, kind, plural, scope }"];
  }
  const problems: string[] = [];
  const fields = spec as unknown as Record<string, unknown>;
  for (const name of Object.keys(fields)) {
    if (SPEC_FIELDS.has(name)) continue;
    problems.push(
      name === "namespaced"
        ? 'there is no "namespaced" field: say scope: "Namespaced" or scope: "Cluster"'
        : `unknown field "${name}": a spec has group, version, kind, plural and scope only`,
    );
  }
  const { group, version, kind, plural, scope } = fields;
  if (typeof group !== "string") {
    problems.push(`group must be a string, "" for the core group (got ${show(group)})`);
  } else if (group.includes("/")) {
    problems.push(
      `group "${group}" contains a "/": give the group and the version apart (e.g. group: "apps", version: "v1")`,
    );
  } else if (group !== "" && !GROUP.test(group)) {
    problems.push(
      `group "${group}" must be a lowercase DNS name such as "apps" or "example.com" ("" for core)`,
    );
  }
  if (typeof version !== "string" || version === "") {
    problems.push(`version must be a non-empty string such as "v1" (got ${show(version)})`);
  } else if (!VERSION.test(version)) {
    problems.push(
      `version "${version}" must be lowercase, starting with a letter, such as "v1" or "v1beta1"`,
    );
  }
  if (typeof kind !== "string" || kind === "") {
    problems.push(`kind must be a non-empty string in PascalCase such as "ConfigMap" (got ${show(kind)})`);
  } else if (!KIND.test(kind)) {
    problems.push(`kind "${kind}" must be PascalCase letters and digits, such as "ConfigMap"`);
  }
  if (typeof plural !== "string" || plural === "") {
    problems.push(
      `plural must be a non-empty string, as in the URL path, such as "configmaps" (got ${show(plural)})`,
    );
  } else if (plural !== plural.toLowerCase()) {
    problems.push(
      `plural "${plural}" must be lowercase, as in the URL path (e.g. "${plural.toLowerCase()}")`,
    );
  } else if (!PLURAL.test(plural)) {
    problems.push(`plural "${plural}" must be a lowercase name as in the URL path, such as "configmaps"`);
  }
  if (scope !== "Namespaced" && scope !== "Cluster") {
    problems.push(`scope must be "Namespaced" or "Cluster" (got ${show(scope)})`);
  }
  return problems;
}

/** How the error names the spec: as kubectl would name the resource, as far as the spec tells. */
function specName(spec: ResourceSpec): string {
  if (spec === null || typeof spec !== "object") return show(spec);
  const { group, plural, kind } = spec as unknown as Record<string, unknown>;
  const name = typeof plural === "string" && plural !== "" ? plural : typeof kind === "string" ? kind : "";
  if (name === "") return "?";
  return typeof group === "string" && group !== "" ? `${name}.${group}` : name;
}

function show(value: unknown): string {
  if (value === undefined) return "nothing";
  // JSON has no spelling for these (and throws on a bigint).
  if (typeof value === "function" || typeof value === "symbol" || typeof value === "bigint") {
    return `a ${typeof value}`;
  }
  return JSON.stringify(value);
}

/**
 * Throws a {@link ResourceDefinitionError} unless `resource` looks like a
 * {@link Resource} handle. For JavaScript callers, and for those migrating
 * from the old `{ group, version, plural, namespaced }` descriptors: without
 * a `scope` such a descriptor would be taken for cluster-scoped and its
 * namespace dropped, listing every namespace instead of failing.
 */
export function assertResource(resource: Resource, user: string): void {
  const r = resource as unknown as Record<string, unknown> | null;
  if (
    r !== null &&
    typeof r === "object" &&
    typeof r.group === "string" &&
    typeof r.version === "string" &&
    typeof r.plural === "string" &&
    r.plural !== "" &&
    (r.scope === "Namespaced" || r.scope === "Cluster")
  ) {
    return;
  }
  throw new ResourceDefinitionError(
    `${user} needs a Resource handle (group, version, kind, plural, scope), got ${show(resource)}: ` +
      "use a ready one (ConfigMaps, Pods, Deployments, ...) or make one with defineResource()",
  );
}

/** `configmaps` for the core group, `deployments.apps`, `widgets.example.com` otherwise (as kubectl names them). */
export function describeResource(resource: Resource): string {
  return resource.group === "" ? resource.plural : `${resource.plural}.${resource.group}`;
}

/**
 * The URL path of the collection: `/api/v1/configmaps`,
 * `/api/v1/namespaces/ns/configmaps`, `/apis/example.com/v1/widgets`.
 * `namespace` is only used for namespaced resources; absent means all namespaces.
 */
export function collectionPath(resource: Resource, namespace?: string): string {
  const base =
    resource.group === "" ? `/api/${resource.version}` : `/apis/${resource.group}/${resource.version}`;
  const scope =
    resource.scope === "Namespaced" && namespace !== undefined && namespace !== ""
      ? `/namespaces/${encodeURIComponent(namespace)}`
      : "";
  return `${base}${scope}/${resource.plural}`;
}
