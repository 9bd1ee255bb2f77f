import type { KubeObject, Reader, Resource } from "@tessera/client";
import type { Logger } from "@tessera/core";
import { requestFor, requestOf, type Request } from "../reconcile/request.js";
import { metadataOf } from "@tessera/client";

/**
 * What a mapping function is given besides the object: the manager's caches
 * to look things up in, so "this Secret → the Greetings that name it" is a
 * read of an index, never a scan and never a request to the API server.
 */
export interface MapContext {
  /**
   * The manager's client (`Tokens.Client`), to read: `get` and `list` serve
   * the caches the controllers declared and their indexes
   * (`list(kind, { index: { name, value } })`), as in a reconcile, and wait
   * for those caches to sync.
   */
  readonly client: Reader;
  /** Aborted when the controller stops: pass it to reads (`{ signal }`) so a wait for a cache ends with it. */
  readonly signal: AbortSignal;
  /** The controller's logger. */
  readonly logger: Logger;
}

/**
 * Maps an object that changed to the requests it should wake
 * (controller-runtime's `handler.EventHandler`, reduced to the mapping: the
 * controller does the queueing). It may be async, and reads the caches
 * through `context.client`.
 *
 * The events of one source are mapped one at a time, in the order they
 * happened: a promise is awaited before the source's next event is mapped
 * (other sources and controllers go on meanwhile). A mapper that throws or
 * rejects is logged (`event handler failed`, with the object's key, the
 * handler `<controller>-watch-<n>` and an error naming the controller) and
 * counted in `tessera_informer_handler_errors_total`; that event is dropped.
 */
export type MapToRequests<T extends KubeObject = KubeObject> = (
  object: T,
  context: MapContext,
) => readonly Request[] | Promise<readonly Request[]>;

/** The object's own request: for the primary kind. */
export function enqueueForObject<T extends KubeObject>(): (object: T) => readonly Request[] {
  return (object) => (metadataOf(object).name ? [requestOf(object)] : []);
}

/**
 * The request of the object's controller owner when that owner is of kind
 * `owner` (an event on an owned ConfigMap wakes the Widget that owns it).
 * Owners are in the object's namespace (namespaced owner) or cluster-scoped.
 */
export function enqueueForOwner<T extends KubeObject>(owner: Resource): (object: T) => readonly Request[] {
  return (object) => {
    const meta = metadataOf(object);
    const ref = meta.ownerReferences?.find(
      (r) => r.controller === true && r.kind === owner.kind && apiGroupOf(r.apiVersion) === owner.group,
    );
    if (!ref) return [];
    return [requestFor(owner.scope === "Namespaced" ? meta.namespace : "", ref.name)];
  };
}

/**
 * The requests of every owner of kind `owner` in the object's
 * `ownerReferences`, controller or not (controller-runtime's
 * `MatchEveryOwner`): a child shared by several primaries wakes them all.
 */
export function enqueueForEveryOwner<T extends KubeObject>(
  owner: Resource,
): (object: T) => readonly Request[] {
  return (object) => {
    const meta = metadataOf(object);
    const namespace = owner.scope === "Namespaced" ? meta.namespace : "";
    return (meta.ownerReferences ?? [])
      .filter((r) => r.kind === owner.kind && apiGroupOf(r.apiVersion) === owner.group)
      .map((r) => requestFor(namespace, r.name));
  };
}

function apiGroupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? "" : apiVersion.slice(0, slash);
}
