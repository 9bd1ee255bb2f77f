import type { ShardField, ShardKeySource } from "./shard-field.js";
import { shardKeyOf } from "./shard-field.js";

/** An owner reference as found in `metadata.ownerReferences`. */
export interface OwnerReferenceLike {
  apiVersion?: string;
  kind?: string;
  name?: string;
  uid?: string;
  controller?: boolean;
}

/** An object that may have owners. */
export interface OwnedObject extends ShardKeySource {
  metadata?: ShardKeySource["metadata"] & { ownerReferences?: OwnerReferenceLike[] };
}

/** The owner reference marked `controller: true`, if any (Kubernetes allows at most one). */
export function controllerOwnerOf(object: OwnedObject): OwnerReferenceLike | undefined {
  return object.metadata?.ownerReferences?.find((ref) => ref.controller === true && !!ref.uid);
}

/**
 * The shard key that decides which member handles a secondary object (one a
 * primary owns, such as the ConfigMap a custom resource creates): the member
 * that owns its controller owner, so events about it reach the member that
 * reconciles the owner.
 *
 * - uid key: the controller owner's UID (the owner's own shard key); an object
 *   without a controller owner is routed by its own UID.
 * - namespace key: the object's namespace; namespaced owners live in the same
 *   namespace, so this is already the owner's shard key.
 */
export function secondaryShardKey(object: OwnedObject, field: ShardField): string {
  if (field === "object.metadata.uid") {
    const owner = controllerOwnerOf(object);
    if (owner?.uid) return owner.uid;
  }
  return shardKeyOf(object, field);
}
