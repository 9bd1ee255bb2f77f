import type { KubeObject, Resource } from "@tessera/client";
import { requestFor, type Request } from "../reconcile/request.js";
import { metadataOf } from "@tessera/client";

/**
 * Maps an object that changed to the requests it should wake
 * (controller-runtime's `handler.EventHandler`, reduced to the mapping: the
 * controller does the queueing).
 */
export type MapToRequests<T extends KubeObject = KubeObject> = (object: T) => readonly Request[];

/** The object's own request: for the primary kind. */
export function enqueueForObject<T extends KubeObject>(): MapToRequests<T> {
  return (object) => {
    const { name, namespace } = metadataOf(object);
    return name ? [requestFor(namespace, name)] : [];
  };
}

/**
 * The request of the object's controller owner when that owner is of kind
 * `owner` (an event on an owned ConfigMap wakes the Widget that owns it).
 * Owners are in the object's namespace (namespaced owner) or cluster-scoped.
 */
export function enqueueForOwner<T extends KubeObject>(owner: Resource): MapToRequests<T> {
  return (object) => {
    const meta = metadataOf(object);
    const ref = meta.ownerReferences?.find(
      (r) => r.controller === true && r.kind === owner.kind && apiGroupOf(r.apiVersion) === owner.group,
    );
    if (!ref) return [];
    return [requestFor(owner.scope === "Namespaced" ? meta.namespace : "", ref.name)];
  };
}

function apiGroupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? "" : apiVersion.slice(0, slash);
}
