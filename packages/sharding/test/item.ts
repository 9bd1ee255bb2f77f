import type { KubeObject } from "@tessera/client";

/** A small object of the sharding tests' collection; the collection gives it a UID (what the shard hash reads) on creation. */
export interface Item extends KubeObject {
  metadata: { name: string; namespace: string; uid?: string; resourceVersion?: string };
  data?: { value: string };
}

/** The Item `name` in `default` holding `value`, to write into the collection. */
export function item(name: string, value = "v"): Item {
  return { metadata: { name, namespace: "default" }, data: { value } };
}
