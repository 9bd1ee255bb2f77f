import type { ResourceScope } from "@tessera/client";

/**
 * Above this many owners' namespaces, a member looks for unlabelled owned
 * objects with one LIST of all namespaces instead of one LIST per
 * namespace. The look is made once per run, one namespace after another:
 * 100 LISTs is about what a cluster-wide LIST of 50,000 objects costs in
 * requests (500 per page), and keeps a member's start from sending
 * thousands of LISTs when its owners are spread over thousands of
 * namespaces (a namespace per tenant); past it, reading the other
 * namespaces' unlabelled objects once (metadata only, some 0.4 kB each) is
 * the cheaper price.
 */
export const UNLABELLED_NAMESPACE_LIMIT = 100;

/** What {@link unlabelledLookNamespaces} decides from. */
export interface UnlabelledLookInputs {
  /** The sharded (owner) kind's scope. */
  readonly ownerScope: ResourceScope;
  /** The owned kind's scope. */
  readonly ownedScope: ResourceScope;
  /** The one namespace the owned kind's cache holds; absent: all. */
  readonly cacheNamespace?: string | undefined;
  /** The namespaces of the owners the member caches (its slots of the sharded kind). */
  readonly ownerNamespaces: Iterable<string | undefined>;
  /** Default {@link UNLABELLED_NAMESPACE_LIMIT}. */
  readonly limit?: number;
}

/**
 * Where a member LISTs an owned kind's objects without the owner-slot
 * label: the namespaces, in order, `undefined` standing for one LIST of all
 * namespaces (or of a cluster-scoped kind); empty when none can hold a
 * child of the member's owners.
 *
 * A namespaced owner can only own objects of its own namespace (the
 * garbage collector treats any other reference as unresolvable), so when
 * both kinds are namespaced only the owners' namespaces are listed, within
 * the owned cache's namespace; past `limit` of them, all namespaces. A
 * cluster-scoped owner may own objects anywhere: the owned cache's
 * namespace, or all. A cluster-scoped object cannot have a namespaced
 * owner: nothing to look for.
 */
export function unlabelledLookNamespaces(inputs: UnlabelledLookInputs): (string | undefined)[] {
  const { ownerScope, ownedScope, cacheNamespace } = inputs;
  const cached = cacheNamespace === "" ? undefined : cacheNamespace;
  if (ownedScope === "Cluster") return ownerScope === "Cluster" ? [undefined] : [];
  if (ownerScope === "Cluster") return [cached];
  const namespaces = new Set<string>();
  for (const namespace of inputs.ownerNamespaces) {
    if (namespace === undefined || namespace === "") continue;
    if (cached === undefined || namespace === cached) namespaces.add(namespace);
  }
  if (namespaces.size > (inputs.limit ?? UNLABELLED_NAMESPACE_LIMIT)) return [cached];
  return [...namespaces].sort();
}
