/** The object fields the API server can shard on (KEP-5866, alpha). */
export const SHARD_FIELDS = ["object.metadata.uid", "object.metadata.namespace"] as const;

/** A shard key field: the object's UID (the default) or its namespace. */
export type ShardField = (typeof SHARD_FIELDS)[number];

/** The default shard key: UIDs are random, so they spread evenly. */
export const DEFAULT_SHARD_FIELD: ShardField = "object.metadata.uid";

/** Whether `value` names a field the server can shard on. */
export function isShardField(value: string): value is ShardField {
  return (SHARD_FIELDS as readonly string[]).includes(value);
}

/** The part of an object the shard key is read from. */
export interface ShardKeySource {
  metadata?: { uid?: string; namespace?: string };
}

/**
 * The string the server hashes for `field`: the UID in its text form, or the
 * namespace name. A missing value is the empty string, as on the server
 * (cluster-scoped objects have namespace "" and so all hash alike).
 */
export function shardKeyOf(object: ShardKeySource, field: ShardField): string {
  return (field === "object.metadata.uid" ? object.metadata?.uid : object.metadata?.namespace) ?? "";
}
