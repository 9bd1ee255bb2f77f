import type { KubeObject } from "@tessera/client";

/**
 * What a reconcile is asked to do: bring the object with this name (and
 * namespace, for a namespaced kind) to its desired state. Level-triggered: it
 * names the object, not the event that woke the controller. A mapping
 * function returns plain literals (`[{ namespace, name }]`); the work queue's
 * key is derived from them ({@link requestKey}), never supplied.
 */
export interface Request {
  /** "" for a cluster-scoped kind. */
  readonly namespace: string;
  readonly name: string;
}

/** The work queue's key of `request`: `namespace/name`, or `name` when cluster-scoped. */
export function requestKey(request: Request): string {
  return request.namespace === "" ? request.name : `${request.namespace}/${request.name}`;
}

/** The {@link Request} for a namespace (`undefined` or `""` when cluster-scoped) and name. */
export function requestFor(namespace: string | undefined, name: string): Request {
  return Object.freeze({ namespace: namespace ?? "", name });
}

/**
 * The {@link Request} naming `object` (its namespace and name): what a
 * mapping function returns for the objects it found, e.g.
 * `(await client.list(Greetings, { index })).map(requestOf)`.
 */
export function requestOf(object: KubeObject): Request {
  return requestFor(object.metadata?.namespace, object.metadata?.name ?? "");
}

/** The {@link Request} a work-queue key names (`namespace/name` or `name`); the inverse of {@link requestKey}. */
export function requestFromKey(key: string): Request {
  const slash = key.indexOf("/");
  return slash < 0 ? requestFor("", key) : requestFor(key.slice(0, slash), key.slice(slash + 1));
}
