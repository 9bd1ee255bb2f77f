/**
 * What a reconcile is asked to do: bring the object with this name (and
 * namespace, for a namespaced kind) to its desired state. Level-triggered: it
 * names the object, not the event that woke the controller.
 */
export interface Request {
  /** "" for a cluster-scoped kind. */
  readonly namespace: string;
  readonly name: string;
  /** `namespace/name`, or `name` when cluster-scoped: the work queue's key. */
  readonly key: string;
}

/** The {@link Request} for a namespace and name. */
export function requestFor(namespace: string | undefined, name: string): Request {
  const ns = namespace ?? "";
  return Object.freeze({ namespace: ns, name, key: ns === "" ? name : `${ns}/${name}` });
}

/** The {@link Request} a work-queue key names (`namespace/name` or `name`). */
export function requestFromKey(key: string): Request {
  const slash = key.indexOf("/");
  return slash < 0 ? requestFor("", key) : requestFor(key.slice(0, slash), key.slice(slash + 1));
}
