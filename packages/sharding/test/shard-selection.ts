import type { ListOptions, WatchOptions } from "@tessera/reflector";
import type { KubeObject } from "@tessera/client";
import type { Selection } from "@tessera/reflector/testing";
import { ShardSelector } from "../src/ranges.js";

/**
 * Server-side filtering by `shardSelector` for an `InMemoryListerWatcher`, as
 * a server implementing KEP-5866 does: only the objects the selector matches,
 * and the canonical selector echoed in a LIST's `metadata.shardInfo`.
 */
export function selectByShard<T extends KubeObject>(
  options: ListOptions | WatchOptions,
): Selection<T> | undefined {
  if (!options.shardSelector) return undefined;
  const selector = ShardSelector.parse(options.shardSelector);
  return {
    matches: (object) => selector.matchesObject(object),
    shardInfo: { selector: selector.canonical().toString() },
  };
}
