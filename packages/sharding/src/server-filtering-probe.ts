import type { KubeObject, ListerWatcher } from "@tessera/reflector";
import { HASH_SPACE } from "./hash-range.js";
import type { ShardField } from "./shard-field.js";
import { ShardSelector } from "./shard-selector.js";

/** What a {@link probeServerFiltering} LIST found out. */
export interface ServerFilteringProbe {
  /** Whether the server filtered the LIST by its `shardSelector` (it echoed `metadata.shardInfo`). */
  readonly filters: boolean;
  /** The selector sent. */
  readonly sent: string;
  /** The selector the server says it applied (`metadata.shardInfo.selector`), if any. */
  readonly applied: string | undefined;
}

/**
 * Asks the server whether it filters `resource` by `shardSelector`: one LIST
 * with `limit=1` and a selector for half the space on `field`. A server that
 * filtered echoes the canonical selector in `metadata.shardInfo`; one with
 * the gate off, or too old to know the parameter, sends none and ignores it.
 * No resourceVersion is sent: at `"0"` the watch cache would ignore the
 * limit and send the whole collection.
 */
export async function probeServerFiltering<T extends KubeObject>(
  listerWatcher: ListerWatcher<T>,
  field: ShardField,
  signal?: AbortSignal,
): Promise<ServerFilteringProbe> {
  const sent = ShardSelector.of(field, [{ start: 0n, end: HASH_SPACE / 2n }]).toString();
  const page = await listerWatcher.list({ limit: 1, shardSelector: sent }, signal);
  const info = page.metadata?.shardInfo;
  return { filters: info !== undefined && info !== null, sent, applied: info?.selector };
}
