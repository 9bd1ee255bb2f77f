import type { ListerWatcher } from "@tessera/reflector";
import type { KubeObject } from "@tessera/client";
import { HASH_SPACE } from "./hash-range.js";
import { shardKeyOf, type ShardField } from "./shard-field.js";
import { ShardSelector } from "./shard-selector.js";

/** What a {@link probeServerFiltering} LIST found out. */
export interface ServerFilteringProbe {
  /**
   * Whether the server filters by `shardSelector`; `undefined` when it could
   * not tell (no echo, and no object in the collection to judge by): ask again
   * once there are objects.
   */
  readonly filters: boolean | undefined;
  /** How it was told: the server echoed `metadata.shardInfo`, or what the pages held. */
  readonly evidence: "echo" | "pages" | "no-objects";
  /** The selector sent first. */
  readonly sent: string;
  /** The selector the server says it applied (`metadata.shardInfo.selector`), if it echoed one. */
  readonly applied: string | undefined;
}

/**
 * Asks the server whether it filters `resource` by `shardSelector`: one LIST
 * with `limit=1` and a selector for half the space on `field`. A server that
 * filtered echoes the canonical selector in `metadata.shardInfo`.
 *
 * Not every handler echoes: the v1.37 apiserver filters custom resources but
 * leaves `shardInfo` out of their lists. So without an echo the pages decide:
 * an object outside the half asked for means no filtering; otherwise a LIST
 * for the single hash 0 (which holds nothing, in practice) comes back empty
 * from a filtering server and with an object from one that ignores the
 * selector, as long as the collection has an object at all.
 *
 * No resourceVersion is sent: at `"0"` the watch cache would ignore the
 * limit and send the whole collection.
 */
export async function probeServerFiltering<T extends KubeObject>(
  listerWatcher: ListerWatcher<T>,
  field: ShardField,
  signal?: AbortSignal,
): Promise<ServerFilteringProbe> {
  const half = ShardSelector.of(field, [{ start: 0n, end: HASH_SPACE / 2n }]);
  const sent = half.toString();
  const page = await listerWatcher.list({ limit: 1, shardSelector: sent }, signal);
  const info = page.metadata?.shardInfo;
  if (info !== undefined && info !== null)
    return { filters: true, evidence: "echo", sent, applied: info.selector };
  const first = page.items[0];
  if (first !== undefined && !half.matchesKey(shardKeyOf(first, field))) {
    return { filters: false, evidence: "pages", sent, applied: undefined };
  }
  const point = ShardSelector.of(field, [{ start: 0n, end: 1n }]).toString();
  const narrow = await listerWatcher.list({ limit: 1, shardSelector: point }, signal);
  if (narrow.items.length > 0) return { filters: false, evidence: "pages", sent, applied: undefined };
  if (first !== undefined) return { filters: true, evidence: "pages", sent, applied: undefined };
  const any = await listerWatcher.list({ limit: 1 }, signal);
  return any.items.length > 0
    ? { filters: true, evidence: "pages", sent, applied: undefined }
    : { filters: undefined, evidence: "no-objects", sent, applied: undefined };
}
