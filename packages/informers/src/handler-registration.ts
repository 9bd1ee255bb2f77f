/**
 * A handler added to an informer. Keep it to ask whether the handler has
 * caught up, or to remove it.
 */
export interface HandlerRegistration {
  /** The handler's name in logs and metrics. */
  readonly name: string;
  /**
   * True once the informer has synced and this handler has been handed (and
   * has finished handling) every object of its initial list.
   */
  hasSynced(): boolean;
  /** Resolves once {@link HandlerRegistration.hasSynced} is true; rejects if the handler is removed first. */
  whenSynced(): Promise<void>;
  /** Notifications waiting for the handler right now. */
  readonly pending: number;
  /** Resolves the next time the handler has nothing waiting and nothing running. */
  whenIdle(): Promise<void>;
  /** Stops delivery to the handler (notifications still waiting are dropped). Removing twice is harmless. */
  remove(): void;
}
