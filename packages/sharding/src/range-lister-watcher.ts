import type { ListerWatcher, ListOptions, WatchEventHandler, WatchOptions } from "@tessera/reflector";
import type { KubeObject, ObjectList, Resource } from "@tessera/client";
import type { ShardSelector } from "./shard-selector.js";

/**
 * One shard of a collection behind the {@link ListerWatcher} contract: every
 * LIST and WATCH of the unsharded `inner` is sent with `selector` as its
 * `shardSelector`, and every list item and watch event is checked again
 * client-side, so a server that ignores the parameter (gate off, an older
 * server, 1.36 without a watch cache) still yields exactly the shard.
 * Bookmarks and anything else that is not an object change pass unchecked:
 * their resourceVersion matters, their object does not.
 */
export class RangeListerWatcher<T extends KubeObject> implements ListerWatcher<T> {
  readonly resource: string;
  /** The inner lister-watcher's typed handle, if it has one. */
  readonly handle?: Resource<T>;
  readonly namespace?: string;
  private readonly param: string;

  /**
   * @param inner the unsharded collection
   * @param selector the shard; its text is what is sent (already validated by {@link ShardSelector})
   * @param onFiltered called with how many items or events the client-side check dropped
   */
  constructor(
    private readonly inner: ListerWatcher<T>,
    readonly selector: ShardSelector,
    private readonly onFiltered: (count: number) => void = () => {},
  ) {
    this.resource = inner.resource;
    if (inner.handle !== undefined) this.handle = inner.handle;
    if (inner.namespace !== undefined) this.namespace = inner.namespace;
    this.param = selector.toString();
  }

  async list(options: ListOptions, signal?: AbortSignal): Promise<ObjectList<T>> {
    const page = await this.inner.list({ ...options, shardSelector: this.param }, signal);
    const all = page.items ?? []; // an empty list may come as `items: null`
    const items = all.filter((obj) => this.selector.matchesObject(obj));
    if (items.length !== all.length) this.onFiltered(all.length - items.length);
    return items.length === all.length && page.items ? page : { ...page, items };
  }

  watch(options: WatchOptions, onEvent: WatchEventHandler<T>, signal?: AbortSignal): Promise<void> {
    return this.inner.watch(
      { ...options, shardSelector: this.param },
      (event) => {
        switch (event.type) {
          case "ADDED":
          case "MODIFIED":
          case "DELETED":
            if (!this.selector.matchesObject(event.object)) {
              this.onFiltered(1);
              return;
            }
            break;
          case "BOOKMARK":
            break; // carries a resourceVersion, no object of any range: always passed on
        }
        onEvent(event);
      },
      signal,
    );
  }
}
