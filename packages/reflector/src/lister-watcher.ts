import type { KubeObject, ObjectList, Resource } from "@tessera/client";
import type { ListOptions, WatchOptions } from "./list-options.js";
import type { WatchEvent } from "./watch-event.js";

/**
 * Called for each event of a watch, synchronously and in stream order. If it
 * throws, the watch is closed and rejects with what it threw.
 */
export type WatchEventHandler<T> = (event: WatchEvent<T>) => void;

/**
 * Lists and watches one collection. The reflector's only view of the server;
 * wrap it to filter (a shard's ranges) or to instrument.
 *
 * Contract:
 * - `list` sends exactly the options given (one page) and resolves with the
 *   page as the server sent it.
 * - `watch` sends exactly the options given, calls `onEvent` for each
 *   ADDED/MODIFIED/DELETED/BOOKMARK event as it is decoded (never buffering
 *   the stream), and resolves when the server ends the stream cleanly.
 *   An ERROR event, an HTTP error, a broken connection or an undecodable
 *   line rejects it with a {@link ListWatchError} (an ERROR event's Status
 *   as an {@link ApiStatusError} with `source: "event"`); nothing is
 *   delivered after the rejection.
 * - Aborting `signal` ends either call promptly; the promise then rejects
 *   with the signal's reason.
 */
export interface ListerWatcher<T extends KubeObject = KubeObject> {
  /** The resource, as kubectl names it (`configmaps`, `widgets.example.com`), for logs and errors. */
  readonly resource: string;
  /**
   * The typed handle of the collection, when the lister-watcher knows it
   * (`KubeListerWatcher` does; a wrapper forwards its inner one's). An
   * informer takes its own handle from here.
   */
  readonly handle?: Resource<T>;
  /** The namespace listed and watched; absent for all namespaces or a cluster-scoped resource. */
  readonly namespace?: string;
  list(options: ListOptions, signal?: AbortSignal): Promise<ObjectList<T>>;
  watch(options: WatchOptions, onEvent: WatchEventHandler<T>, signal?: AbortSignal): Promise<void>;
}
