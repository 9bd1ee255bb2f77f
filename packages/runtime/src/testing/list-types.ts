import type { Json } from "./json-patches.js";
import type { ListType, ListTypes } from "./field-ownership.js";

type Schema = Record<string, unknown>;

const byName: ListType = { type: "map", keys: ["name"] };
const byPortAndProtocol = (port: string): ListType => ({
  type: "map",
  keys: [port, "protocol"],
  defaults: { protocol: "TCP" },
});

/** The list-maps of a pod spec at `at`, as the server's OpenAPI declares them (the common ones). */
function podSpec(at: string): [string, ListType][] {
  const out: [string, ListType][] = [[`${at}.volumes`, byName]];
  for (const containers of ["containers", "initContainers"]) {
    out.push(
      [`${at}.${containers}`, byName],
      [`${at}.${containers}.ports`, byPortAndProtocol("containerPort")],
      [`${at}.${containers}.env`, byName],
      [`${at}.${containers}.volumeMounts`, { type: "map", keys: ["mountPath"] }],
    );
  }
  return out;
}

/** A workload's: its pod template's lists, and its label selector, an atomic map. */
const workload = (at: string): [string, ListType][] => [
  ["spec.selector", { type: "atomic" }],
  ...podSpec(at),
];

/**
 * The list types server-side apply uses on built-in kinds, by resource key
 * (`group/version/plural`): the common list-maps of the server's OpenAPI
 * (containers, init containers and volumes by `name`, ports by port and
 * `protocol`, `env` by `name`, volume mounts by `mountPath`, a Service's
 * ports), and the workloads' `spec.selector`, an atomic map. Other lists
 * of built-in kinds are atomic for the fake.
 */
export const BUILTIN_LIST_TYPES: ReadonlyMap<string, ReadonlyMap<string, ListType>> = new Map(
  (
    [
      ["/v1/pods", podSpec("spec")],
      ["/v1/services", [["spec.ports", byPortAndProtocol("port")]]],
      ["/v1/replicationcontrollers", podSpec("spec.template.spec")],
      ["apps/v1/deployments", workload("spec.template.spec")],
      ["apps/v1/replicasets", workload("spec.template.spec")],
      ["apps/v1/statefulsets", workload("spec.template.spec")],
      ["apps/v1/daemonsets", workload("spec.template.spec")],
      ["batch/v1/jobs", workload("spec.template.spec")],
      ["batch/v1/cronjobs", podSpec("spec.jobTemplate.spec.template.spec")],
    ] as [string, [string, ListType][]][]
  ).map(([key, entries]) => [key, new Map(entries)]),
);

/**
 * The list types a CustomResourceDefinition's schema declares for one
 * version (`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`, and the
 * `default` of key fields), by schema path; undefined when the CRD does not
 * serve `version`.
 */
export function crdListTypes(crd: unknown, version: string): Map<string, ListType> | undefined {
  const versions = (
    crd as { spec?: { versions?: { name?: string; schema?: { openAPIV3Schema?: Schema } }[] } }
  ).spec?.versions;
  const served = versions?.find((v) => v.name === version);
  if (!served) return undefined;
  const out = new Map<string, ListType>();
  const walk = (schema: Schema | undefined, path: string): void => {
    if (!schema) return;
    const items = schema["items"] as Schema | undefined;
    const listType = schema["x-kubernetes-list-type"];
    if (listType === "set") out.set(path, { type: "set" });
    if (listType === "map") {
      const keys = (schema["x-kubernetes-list-map-keys"] as string[] | undefined) ?? [];
      const properties = (items?.["properties"] ?? {}) as Record<string, Schema>;
      const defaults: Record<string, Json> = {};
      for (const key of keys) {
        const fallback = properties[key]?.["default"];
        if (fallback !== undefined) defaults[key] = fallback as Json;
      }
      out.set(path, { type: "map", keys, ...(Object.keys(defaults).length > 0 ? { defaults } : {}) });
    }
    const properties = (schema["properties"] ?? {}) as Record<string, Schema>;
    for (const [key, child] of Object.entries(properties)) walk(child, path ? `${path}.${key}` : key);
    // A list's entries add no element to a schema path.
    walk(items, path);
  };
  walk(served.schema?.openAPIV3Schema, "");
  return out;
}

/** The lists of every kind's metadata: finalizers a set, owner references a list-map by `uid` of atomic entries. */
const METADATA_LIST_TYPES: ReadonlyMap<string, ListType> = new Map<string, ListType>([
  ["metadata.finalizers", { type: "set" }],
  ["metadata.ownerReferences", { type: "map", keys: ["uid"], atomicEntries: true }],
]);

/** A {@link ListTypes} lookup over a kind's table, and the metadata's lists every kind has. */
export function listTypesOf(table: ReadonlyMap<string, ListType> | undefined): ListTypes {
  return (path) => METADATA_LIST_TYPES.get(path) ?? table?.get(path);
}
