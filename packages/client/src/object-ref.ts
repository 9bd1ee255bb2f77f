import type { ApiErrorContext } from "./api-error.js";
import type { ObjectRef } from "./client.js";
import type { KubeObject } from "./kube-object.js";
import { collectionPath, describeResource, type Resource } from "./resource.js";

/**
 * The reference of `object` (its name, and its namespace when it has one);
 * a TypeError naming the kind when it has no name. Shared by every client so
 * that they refuse the same objects with the same words.
 */
export function objectRefOf(object: KubeObject): ObjectRef {
  const name = object.metadata?.name;
  if (!name) {
    throw new TypeError(
      `the object has no metadata.name (kind ${object.kind ?? "unknown"}); set it, or use generateName with create`,
    );
  }
  const namespace = object.metadata?.namespace;
  return namespace ? { name, namespace } : { name };
}

/**
 * The URL path of one object; a TypeError when the reference has no name,
 * or no namespace for a namespaced kind.
 */
export function objectPath(resource: Resource, ref: ObjectRef): string {
  if (!ref.name) throw new TypeError(`${describeResource(resource)}: an object reference needs a name`);
  if (resource.scope === "Namespaced" && !ref.namespace) {
    throw new TypeError(
      `${describeResource(resource)} ${ref.name}: the resource is namespaced; give the object's namespace`,
    );
  }
  return `${collectionPath(resource, ref.namespace)}/${encodeURIComponent(ref.name)}`;
}

/** What an {@link ApiError} about `verb` on one object names. */
export function requestContext(verb: string, resource: Resource, ref: ObjectRef): ApiErrorContext {
  return { verb, resource: describeResource(resource), namespace: ref.namespace, name: ref.name };
}
