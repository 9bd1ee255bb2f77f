import type { KubeObject } from "@tessera/reflector";

/** An owner reference in `metadata.ownerReferences`. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/**
 * An object's metadata as the API server sends it (timestamps are RFC 3339
 * strings; client-node's models, which type them as `Date`, fit too). The
 * metadata of the types `tessera generate` writes.
 */
export interface RuntimeObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string | Date;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  /** Set when a delete was asked for; the object stays while `finalizers` is not empty. */
  finalizers?: string[];
  deletionTimestamp?: string | Date;
  deletionGracePeriodSeconds?: number;
}

/** `object.metadata` as the runtime reads it (every model of client-node fits). */
export function metadataOf(object: KubeObject): RuntimeObjectMeta {
  return object.metadata ?? {};
}
