import { DeletedFinalStateUnknown } from "./deleted-final-state-unknown.js";
import type { KubeObject } from "@tessera/client";

/** Computes the key an object is stored under. */
export type KeyFunc<T> = (obj: T) => string;

/** Raised when an object has no `metadata.name` to key it by. */
export class ObjectKeyError extends Error {
  override name = "ObjectKeyError";
}

/**
 * `namespace/name`, or `name` for objects without a namespace (cluster-scoped).
 * Tombstones ({@link DeletedFinalStateUnknown}) give their own key.
 */
export function metaNamespaceKey(obj: KubeObject | DeletedFinalStateUnknown<unknown>): string {
  if (obj instanceof DeletedFinalStateUnknown) return obj.key;
  const meta = obj.metadata;
  const name = meta?.name;
  if (typeof name !== "string" || name === "") {
    throw new ObjectKeyError(`object has no metadata.name: ${JSON.stringify(meta ?? null)?.slice(0, 200)}`);
  }
  const ns = meta?.namespace;
  return ns ? `${ns}/${name}` : name;
}

/** Splits a {@link metaNamespaceKey} key into namespace (`""` when none) and name. */
export function splitMetaNamespaceKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf("/");
  if (slash === -1) return { namespace: "", name: key };
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
