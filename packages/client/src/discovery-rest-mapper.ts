import { defineResource, type Resource } from "./resource.js";
import { type KubeObject } from "./kube-object.js";
import { isNotFound } from "./api-error.js";
import type { KubeTransport } from "./kube-transport.js";
import type { GroupVersionKind, RestMapper } from "./rest-mapper.js";

/** A kind the API server does not serve (yet): its CRD is missing, or the version or kind is misspelt. */
export class KindNotFoundError extends Error {
  override name = "KindNotFoundError";

  constructor(
    readonly gvk: GroupVersionKind,
    detail: string,
  ) {
    const apiVersion = gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version;
    super(
      `the API server does not serve kind "${gvk.kind}" in group "${gvk.group || "core"}", version "${gvk.version}" ` +
        `(apiVersion ${apiVersion}): ${detail}; install its CustomResourceDefinition, or check the group, version and kind`,
    );
  }
}

interface ApiResourceList {
  resources?: Array<{ name: string; kind: string; namespaced: boolean }>;
}

/**
 * The {@link RestMapper} over the API server's discovery: one request per
 * group-version (`/api/v1`, `/apis/<group>/<version>`), cached; a kind not in
 * the cache refreshes its group-version once (concurrent misses share the
 * request) before failing with a {@link KindNotFoundError}, so a CRD installed
 * after start-up is found.
 */
export class DiscoveryRestMapper implements RestMapper {
  private readonly cache = new Map<string, Promise<Map<string, Resource>>>();

  constructor(private readonly transport: KubeTransport) {}

  async resourceFor<T extends KubeObject = KubeObject>(
    gvk: GroupVersionKind,
    options: { signal?: AbortSignal } = {},
  ): Promise<Resource<T>> {
    const gv = gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version;
    const cached = this.cache.get(gv);
    if (cached) {
      const hit = (await cached.catch(() => undefined))?.get(gvk.kind);
      if (hit) return hit as Resource<T>;
    }
    const fresh = this.discover(gvk, options.signal);
    this.cache.set(gv, fresh);
    fresh.catch(() => this.cache.get(gv) === fresh && this.cache.delete(gv));
    const resource = (await fresh).get(gvk.kind);
    if (!resource) throw new KindNotFoundError(gvk, `discovery of ${gv} lists no such kind`);
    return resource as Resource<T>;
  }

  private async discover(
    gvk: GroupVersionKind,
    signal: AbortSignal | undefined,
  ): Promise<Map<string, Resource>> {
    const path = gvk.group ? `/apis/${gvk.group}/${gvk.version}` : `/api/${gvk.version}`;
    let list: ApiResourceList;
    try {
      list = await this.transport.call<ApiResourceList>(
        { verb: "discover", resource: path },
        { method: "GET", path, signal },
      );
    } catch (error) {
      if (isNotFound(error)) throw new KindNotFoundError(gvk, `the server has no API at ${path}`);
      throw error;
    }
    const byKind = new Map<string, Resource>();
    for (const r of list.resources ?? []) {
      if (r.name.includes("/") || byKind.has(r.kind)) continue; // subresources (`widgets/status`)
      byKind.set(
        r.kind,
        defineResource({
          group: gvk.group,
          version: gvk.version,
          kind: r.kind,
          plural: r.name,
          scope: r.namespaced ? "Namespaced" : "Cluster",
        }),
      );
    }
    return byKind;
  }
}
