/**
 * Options of a LIST request, with the names and meaning of the Kubernetes API
 * query parameters. Every option set is sent; none is invented.
 */
export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  /** Server-side sharding (KEP-5866), e.g. `shardRange(object.metadata.uid, '0x0…', '0x8…')`. */
  shardSelector?: string;
  /** Page size; with `continue`, the next page. */
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: "NotOlderThan" | "Exact";
  timeoutSeconds?: number;
}

/** Options of a WATCH request (`watch=1` is implied). */
export interface WatchOptions {
  labelSelector?: string;
  fieldSelector?: string;
  shardSelector?: string;
  resourceVersion?: string;
  resourceVersionMatch?: "NotOlderThan" | "Exact";
  /** Ask for the current state as ADDED events first (watch-list, KEP-3157). */
  sendInitialEvents?: boolean;
  allowWatchBookmarks?: boolean;
  /** The server ends the watch cleanly after this long. */
  timeoutSeconds?: number;
}

const PARAMETERS = [
  "labelSelector",
  "fieldSelector",
  "shardSelector",
  "limit",
  "continue",
  "resourceVersion",
  "resourceVersionMatch",
  "sendInitialEvents",
  "allowWatchBookmarks",
  "timeoutSeconds",
] as const;

/**
 * The query string (without `?`) for `options`, in a fixed order. Absent
 * options are left out; an empty `resourceVersion` is sent (it means "most
 * recent" and is what a watch-list on first start asks for).
 */
export function toQueryString(options: ListOptions | WatchOptions, watch: boolean): string {
  const params = new URLSearchParams();
  if (watch) params.set("watch", "1");
  const record = options as Record<string, string | number | boolean | undefined>;
  for (const name of PARAMETERS) {
    const value = record[name];
    if (value === undefined) continue;
    if (value === "" && name !== "resourceVersion") continue;
    params.set(name, String(value));
  }
  return params.toString();
}
