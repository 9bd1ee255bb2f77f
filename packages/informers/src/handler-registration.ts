import type { Syncable } from "@tessera/core";

/**
 * A handler added to an informer. Keep it to ask whether the handler has
 * caught up, or to let the handler go ({@link HandlerRegistration.close}).
 */
export interface HandlerRegistration extends Syncable {
  /** The handler's name in logs and metrics. */
  readonly name: string;
  /**
   * True once the informer has synced and this handler has been handed (and
   * has finished handling) every object of its initial list.
   */
  hasSynced(): boolean;
  /**
   * Resolves `true` once {@link HandlerRegistration.hasSynced} is; `false`
   * if `signal` aborts first, the registration is closed first, or the
   * informer stops without having synced. Never rejects.
   */
  waitForSync(signal?: AbortSignal): Promise<boolean>;
  /** Notifications waiting for the handler right now. */
  readonly pending: number;
  /** Resolves the next time the handler has nothing waiting and nothing running. */
  whenIdle(): Promise<void>;
  /**
   * Lets the handler go: nothing more is delivered to it (notifications
   * still waiting are dropped) and pending waits for its sync answer `false`.
   * Closing twice is harmless.
   */
  close(): void;
}
