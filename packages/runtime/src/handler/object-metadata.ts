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

/** The metadata fields the runtime reads beyond the reflector's `ObjectMeta`. */
export interface RuntimeObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  deletionTimestamp?: string | Date;
}

/** `object.metadata` as the runtime reads it (every model of client-node fits). */
export function metadataOf(object: KubeObject): RuntimeObjectMeta {
  return object.metadata ?? {};
}
