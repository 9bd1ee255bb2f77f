import type { KubeObject, ObjectMeta } from "./kube-object.js";

/** `object.metadata`, or an empty one when the object has none. */
export function metadataOf(object: KubeObject): ObjectMeta {
  return object.metadata ?? {};
}
