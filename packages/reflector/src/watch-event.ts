import type { KubeObject } from "@tessera/client";

/**
 * The event types a watch delivers to its handler. ERROR events are not
 * delivered: a {@link ListerWatcher} turns them into a rejected watch.
 */
export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK";

/** One event of a watch stream. */
export interface WatchEvent<T = KubeObject> {
  type: WatchEventType;
  /**
   * The object; for BOOKMARK only `metadata.resourceVersion` (and, at the end
   * of a watch-list's initial events, the `k8s.io/initial-events-end`
   * annotation) mean anything.
   */
  object: T;
}

/** The annotation on the bookmark that ends a watch-list's initial events. */
export const INITIAL_EVENTS_END_ANNOTATION = "k8s.io/initial-events-end";

/** Whether `event` is the bookmark that ends the initial events of a watch-list. */
export function isInitialEventsEndBookmark(event: WatchEvent<KubeObject>): boolean {
  return (
    event.type === "BOOKMARK" &&
    event.object.metadata?.annotations?.[INITIAL_EVENTS_END_ANNOTATION] === "true"
  );
}
