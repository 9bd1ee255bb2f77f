/**
 * Which collection a {@link ListerWatcher} lists and watches: any resource,
 * core or grouped, namespaced or cluster-scoped, built-in or custom.
 *
 * ```ts
 * const configMaps: ResourceDescriptor = { group: "", version: "v1", plural: "configmaps", namespaced: true };
 * const widgets: ResourceDescriptor = { group: "example.com", version: "v1", plural: "widgets", namespaced: false };
 * ```
 */
export interface ResourceDescriptor {
  /** API group; `""` for the core group (`/api/v1`). */
  group: string;
  version: string;
  /** The resource's plural name, as in its URL path. */
  plural: string;
  /** Whether objects live in namespaces. */
  namespaced: boolean;
}

/** `configmaps` for the core group, `deployments.apps`, `widgets.example.com` otherwise (as kubectl names them). */
export function describeResource(resource: ResourceDescriptor): string {
  return resource.group === "" ? resource.plural : `${resource.plural}.${resource.group}`;
}

/**
 * The URL path of the collection: `/api/v1/configmaps`,
 * `/api/v1/namespaces/ns/configmaps`, `/apis/example.com/v1/widgets`.
 * `namespace` is only used for namespaced resources; absent means all namespaces.
 */
export function collectionPath(resource: ResourceDescriptor, namespace?: string): string {
  const base =
    resource.group === "" ? `/api/${resource.version}` : `/apis/${resource.group}/${resource.version}`;
  const scope =
    resource.namespaced && namespace !== undefined && namespace !== ""
      ? `/namespaces/${encodeURIComponent(namespace)}`
      : "";
  return `${base}${scope}/${resource.plural}`;
}
