import type { DeletedFinalStateUnknown } from "@tessera/reflector";

/**
 * What a handler is told about a cached collection. Every callback is
 * optional; one that returns a promise is awaited before the same handler
 * gets its next notification (other handlers are not held up). A callback
 * that throws or rejects is logged and counted; delivery goes on.
 *
 * A handler sees, for each object, a sequence that replays the cache: an
 * add, then updates (each `oldObj` is the previous `newObj`), then a delete.
 * Resyncs are updates whose `oldObj` and `newObj` are the same object.
 */
export interface ResourceEventHandler<T> {
  /**
   * An object appeared: created, or already there when the informer (or this
   * handler) started, in which case `isInInitialList` is true.
   */
  onAdd?(obj: T, isInInitialList: boolean): void | Promise<void>;
  /** An object changed, or is re-delivered by a resync (`oldObj === newObj`). */
  onUpdate?(oldObj: T, newObj: T): void | Promise<void>;
  /**
   * An object was deleted. When its deletion was only noticed by a relist,
   * `obj` is a {@link DeletedFinalStateUnknown} holding the last state seen.
   */
  onDelete?(obj: T | DeletedFinalStateUnknown<T>): void | Promise<void>;
}

/** Options of one handler registration. */
export interface EventHandlerOptions {
  /** Names the handler in logs and metrics; default `handler-<n>`. */
  name?: string;
  /**
   * Re-deliver every cached object to this handler (as an update with
   * `oldObj === newObj`) once per period; 0 or absent: never. Scheduled in
   * whole seconds, so periods under a second act as one second.
   */
  resyncPeriodMs?: number;
}

/** One notification waiting for a handler. */
export type Notification<T> =
  | { readonly type: "add"; readonly object: T; readonly isInInitialList: boolean }
  | { readonly type: "update"; readonly oldObject: T; readonly newObject: T; readonly resync: boolean }
  | { readonly type: "delete"; readonly object: T | DeletedFinalStateUnknown<T> };
