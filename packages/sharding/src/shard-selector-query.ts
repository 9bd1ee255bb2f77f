import { ShardSelector } from "./shard-selector.js";

/**
 * The value to send as the `shardSelector` query parameter of a LIST or
 * WATCH. A string is parsed first, so a malformed selector (which the server
 * would answer with HTTP 500) fails here with a {@link ShardSelectorError}
 * and is never sent; what is sent is the server's own serialization.
 */
export function shardSelectorParam(selector: ShardSelector | string): string {
  return (typeof selector === "string" ? ShardSelector.parse(selector) : selector).toString();
}

/**
 * `path` (an API path, possibly with a query already) with the
 * `shardSelector` parameter added, validated as by {@link shardSelectorParam}.
 *
 * ```ts
 * withShardSelector("/api/v1/namespaces/a/configmaps?limit=500", selector)
 * // "/api/v1/namespaces/a/configmaps?limit=500&shardSelector=shardRange(...)"
 * ```
 */
export function withShardSelector(path: string, selector: ShardSelector | string): string {
  const value = encodeURIComponent(shardSelectorParam(selector));
  return `${path}${path.includes("?") ? "&" : "?"}shardSelector=${value}`;
}
