/**
 * The pending `waitForSync` calls of one thing that syncs (an informer, a
 * handler registration): each resolves `true` when the owner settles them as
 * synced, `false` when it settles them as never going to sync (it stopped,
 * was closed) or when the caller's own signal aborts. Never rejects.
 * Internal to the package.
 */
export class SyncWaiters {
  private readonly waiters = new Set<(synced: boolean) => void>();

  /** A promise that waits for {@link SyncWaiters.settle}, or resolves `false` once `signal` aborts. */
  wait(signal: AbortSignal | undefined): Promise<boolean> {
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const onAbort = (): void => done(false);
      const done = (synced: boolean): void => {
        this.waiters.delete(done);
        signal?.removeEventListener("abort", onAbort);
        resolve(synced);
      };
      this.waiters.add(done);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Resolves every pending wait with `synced`. */
  settle(synced: boolean): void {
    for (const done of Array.from(this.waiters)) done(synced);
  }
}
