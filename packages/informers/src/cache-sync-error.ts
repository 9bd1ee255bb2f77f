/** One informer that had not synced when {@link CacheSyncError} was raised. */
export interface UnsyncedInformer {
  /** The resource, as kubectl names it. */
  resource: string;
  /** The namespace cached; absent for all namespaces or cluster-scoped resources. */
  namespace?: string;
  /** The informer's name. */
  informer: string;
  /** Its last list or watch failure, if any (e.g. a 404 for a resource the server does not serve). */
  lastError?: unknown;
}

/**
 * `SharedInformerFactory.requireSync` gave up: its timeout passed
 * (`reason: "timeout"`), its signal aborted (`"aborted"`), or an informer
 * stopped (`"stopped"`: the factory stopped, or the informer was released)
 * while some informers had not synced. The message names each of them and
 * its last error.
 */
export class CacheSyncError extends Error {
  override name = "CacheSyncError";

  constructor(
    readonly reason: "timeout" | "aborted" | "stopped",
    /** The informers that had not synced. */
    readonly unsynced: readonly UnsyncedInformer[],
    afterMs: number,
    options?: { cause?: unknown },
  ) {
    const list = unsynced
      .map((u) => {
        const where = u.namespace ? ` in namespace "${u.namespace}"` : "";
        const last = u.lastError === undefined ? "" : ` (last error: ${errorText(u.lastError)})`;
        return `${u.resource}${where}${last}`;
      })
      .join("; ");
    const after = `after ${Math.round(afterMs)} ms`;
    const why =
      reason === "timeout"
        ? `timed out ${after}`
        : reason === "aborted"
          ? `aborted ${after}`
          : `ended ${after}: informers stopped`;
    super(`waiting for caches to sync ${why}; not synced: ${list}`, options);
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
