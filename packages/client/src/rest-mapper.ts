import type { KubeObject } from "./kube-object.js";
import type { Resource } from "./resource.js";

/** A kind as an author names it without a typed handle. */
export interface GroupVersionKind {
  /** "" for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/**
 * Maps kinds to the resources that serve them (plural, scope) from the API
 * server's discovery, custom resources included: kube-rs's and client-go's
 * REST mapper. Cached; a miss refreshes discovery once before failing.
 */
export interface RestMapper {
  /** The handle of `gvk`; rejects with a `KindNotFoundError` naming group, version and kind when the server does not serve it. */
  resourceFor<T extends KubeObject = KubeObject>(
    gvk: GroupVersionKind,
    options?: { signal?: AbortSignal },
  ): Promise<Resource<T>>;
}
