import type { KubeObject } from "@tessera/client";
import type { ListerWatcher } from "./lister-watcher.js";
import { listAllPages } from "./pager.js";

/** What a snapshot holds per key for comparison: `uid/resourceVersion`. */
export type SnapshotVersions = Map<string, string>;

/** The keys that differ between a watch-list snapshot and a LIST. */
export interface SnapshotDifferences {
  onlyInWatchList: string[];
  onlyInList: string[];
  differentVersion: string[];
}

/** `uid/resourceVersion` of an object, what two copies of it must agree on. */
export function objectVersion(obj: KubeObject): string {
  return `${obj.metadata?.uid ?? ""}/${obj.metadata?.resourceVersion ?? ""}`;
}

/**
 * Lists the collection the classic way at exactly `resourceVersion` (one
 * unpaginated request, servable from the watch cache) and compares it, key by
 * key, with `snapshot`. Resolves `undefined` when they agree.
 */
export async function compareWithList<T extends KubeObject>(
  lw: ListerWatcher<T>,
  resourceVersion: string,
  snapshot: SnapshotVersions,
  keyOf: (obj: T) => string,
  signal?: AbortSignal,
): Promise<SnapshotDifferences | undefined> {
  const list = await listAllPages(lw, { resourceVersion, resourceVersionMatch: "Exact" }, 0, signal);
  const differences: SnapshotDifferences = { onlyInWatchList: [], onlyInList: [], differentVersion: [] };
  const seen = new Set<string>();
  for (const obj of list.items) {
    const key = keyOf(obj);
    seen.add(key);
    const version = snapshot.get(key);
    if (version === undefined) differences.onlyInList.push(key);
    else if (version !== objectVersion(obj)) differences.differentVersion.push(key);
  }
  for (const key of snapshot.keys()) if (!seen.has(key)) differences.onlyInWatchList.push(key);
  const same =
    differences.onlyInList.length === 0 &&
    differences.onlyInWatchList.length === 0 &&
    differences.differentVersion.length === 0;
  return same ? undefined : differences;
}
