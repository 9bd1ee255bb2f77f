import {
  ApiStatusError,
  INITIAL_EVENTS_END_ANNOTATION,
  metaNamespaceKey,
  type KubeObject,
  type ListerWatcher,
  type ListOptions,
  type ObjectList,
  type WatchEvent,
  type WatchEventHandler,
  type WatchOptions,
} from "@tessera/reflector";

interface Watcher<T> {
  onEvent: WatchEventHandler<T>;
  fail: (err: unknown) => void;
  end: () => void;
}

/**
 * A collection held in memory behind the {@link ListerWatcher} contract, for
 * unit tests of the informer (the integration tests use a real apiserver).
 * Writes bump a resourceVersion counter and go to every open watch; watch-list
 * requests get the current objects as ADDED events and the end bookmark.
 */
export class MemoryListerWatcher<T extends KubeObject> implements ListerWatcher<T> {
  readonly namespace: string | undefined = undefined;
  private readonly objects = new Map<string, T>();
  private readonly watchers = new Set<Watcher<T>>();
  private rv = 1;
  lists = 0;
  watches = 0;

  constructor(readonly resource = "widgets.test.example") {}

  get resourceVersion(): string {
    return String(this.rv);
  }

  get size(): number {
    return this.objects.size;
  }

  get openWatches(): number {
    return this.watchers.size;
  }

  snapshot(): Map<string, T> {
    return new Map(this.objects);
  }

  /** Creates or replaces an object; `silent` skips the watch event (a change the watch misses). */
  put(obj: T, silent = false): T {
    const key = metaNamespaceKey(obj);
    const existed = this.objects.has(key);
    const stored = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.rv) } } as T;
    this.objects.set(key, stored);
    if (!silent) this.emit({ type: existed ? "MODIFIED" : "ADDED", object: stored });
    return stored;
  }

  /** Deletes an object; `silent` skips the watch event. */
  remove(key: string, silent = false): void {
    const old = this.objects.get(key);
    if (!old) return;
    this.objects.delete(key);
    const gone = { ...old, metadata: { ...old.metadata, resourceVersion: String(++this.rv) } } as T;
    if (!silent) this.emit({ type: "DELETED", object: gone });
  }

  /** Fails every open watch with `err` (e.g. a 410 to force a relist). */
  failWatches(err: unknown): void {
    for (const w of Array.from(this.watchers)) w.fail(err);
  }

  /** A 410 Expired, as the apiserver sends when a watch's resourceVersion is compacted away. */
  expired(): ApiStatusError {
    return new ApiStatusError(
      { resource: this.resource, verb: "watch" },
      410,
      "Expired",
      "too old",
      undefined,
      "event",
    );
  }

  async list(_options: ListOptions, signal?: AbortSignal): Promise<ObjectList<T>> {
    signal?.throwIfAborted();
    this.lists++;
    await Promise.resolve();
    return { metadata: { resourceVersion: this.resourceVersion }, items: Array.from(this.objects.values()) };
  }

  watch(options: WatchOptions, onEvent: WatchEventHandler<T>, signal?: AbortSignal): Promise<void> {
    this.watches++;
    return new Promise<void>((resolve, reject) => {
      let done = false;
      const watcher: Watcher<T> = {
        onEvent: (event) => {
          if (done) return;
          try {
            onEvent(event);
          } catch (err) {
            watcher.fail(err);
          }
        },
        fail: (err) => {
          if (done) return;
          done = true;
          this.watchers.delete(watcher);
          signal?.removeEventListener("abort", onAbort);
          reject(err);
        },
        end: () => {
          if (done) return;
          done = true;
          this.watchers.delete(watcher);
          resolve();
        },
      };
      const onAbort = (): void => watcher.fail(signal?.reason);
      if (signal?.aborted) return watcher.fail(signal.reason);
      signal?.addEventListener("abort", onAbort, { once: true });
      // Events are sent from a later turn, as a socket would deliver them.
      queueMicrotask(() => {
        if (done) return;
        this.watchers.add(watcher);
        if (options.sendInitialEvents) {
          for (const obj of this.objects.values()) watcher.onEvent({ type: "ADDED", object: obj });
          watcher.onEvent({
            type: "BOOKMARK",
            object: {
              metadata: {
                resourceVersion: this.resourceVersion,
                annotations: { [INITIAL_EVENTS_END_ANNOTATION]: "true" },
              },
            } as unknown as T,
          });
        }
      });
    });
  }

  private emit(event: WatchEvent<T>): void {
    for (const w of Array.from(this.watchers)) w.onEvent(event);
  }
}
