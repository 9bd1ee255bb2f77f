import { createHash } from "node:crypto";
import { toError } from "@tessera/core";
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
import { ShardSelector } from "../src/ranges.js";

/** A small object with a UID, as the shard hash needs. */
export interface Item extends KubeObject {
  metadata: { name: string; namespace: string; uid: string; resourceVersion?: string };
  data?: { value: string };
}

/** A request the collection received. */
export interface Request {
  readonly verb: "list" | "watch";
  readonly options: ListOptions & WatchOptions;
}

interface OpenWatch {
  readonly sent: string | undefined;
  readonly onEvent: WatchEventHandler<Item>;
  readonly fail: (err: unknown) => void;
}

/**
 * A collection in memory behind the {@link ListerWatcher} contract, for the
 * sharded reflector's unit tests: resourceVersions count up, every change is
 * logged so a watch from an older resourceVersion replays what it missed
 * (as the API server's watch cache does), watch-list requests get the
 * current objects and the end bookmark, and `shardSelector` is honoured
 * (with `shardInfo` echoed on lists) only while {@link serverFilters} is on.
 * Every request is recorded.
 */
export class MemoryCollection implements ListerWatcher<Item> {
  readonly resource = "items.test.example";
  readonly requests: Request[] = [];
  serverFilters = true;
  private readonly objects = new Map<string, Item>();
  private readonly log: { rv: number; event: WatchEvent<Item> }[] = [];
  private readonly open = new Set<OpenWatch>();
  private rv = 100;
  private uidSeq = 0;
  private paused: Promise<void> | undefined;
  private unpause: (() => void) | undefined;

  get resourceVersion(): string {
    return String(this.rv);
  }

  get openWatches(): number {
    return this.open.size;
  }

  /** The objects held, by key, limited to `selector` when given. */
  snapshot(selector?: ShardSelector): Map<string, Item> {
    const out = new Map<string, Item>();
    for (const [k, o] of this.objects) if (!selector || selector.matchesObject(o)) out.set(k, o);
    return out;
  }

  /** Creates `name` with a fresh UID (or `uid`), or changes its data if it exists. */
  put(name: string, value = "v", uid?: string): Item {
    const key = `default/${name}`;
    const old = this.objects.get(key);
    const obj: Item = {
      metadata: {
        name,
        namespace: "default",
        uid: old?.metadata.uid ?? uid ?? this.nextUid(),
        resourceVersion: String(++this.rv),
      },
      data: { value },
    };
    this.objects.set(key, obj);
    this.emit({ type: old ? "MODIFIED" : "ADDED", object: obj });
    return obj;
  }

  /** Deletes `name`; `silent`: no event is sent or logged (a change only a relist sees). */
  remove(name: string, silent = false): void {
    const key = `default/${name}`;
    const old = this.objects.get(key);
    if (!old) return;
    this.objects.delete(key);
    ++this.rv;
    if (silent) return;
    this.emit({
      type: "DELETED",
      object: { ...old, metadata: { ...old.metadata, resourceVersion: String(this.rv) } },
    });
  }

  /** Sends a bookmark at the current resourceVersion to every open watch. */
  bookmark(): void {
    const event: WatchEvent<Item> = {
      type: "BOOKMARK",
      object: { metadata: { resourceVersion: this.resourceVersion } } as unknown as Item,
    };
    for (const w of Array.from(this.open)) w.onEvent(event);
  }

  /**
   * Ends open watches with a 410, as after a compaction (only those sent
   * `shardSelector`, when given); the log is forgotten, so resuming from an
   * older resourceVersion fails too.
   */
  expire(shardSelector?: string): void {
    this.log.length = 0;
    for (const w of Array.from(this.open)) {
      if (shardSelector === undefined || w.sent === shardSelector) w.fail(this.expired("watch"));
    }
  }

  /** Holds new lists and watches (they are answered, watches replaying what they missed, on {@link resume}). */
  pause(): void {
    this.paused ??= new Promise<void>((resolve) => (this.unpause = resolve));
  }

  resume(): void {
    this.unpause?.();
    this.paused = undefined;
    this.unpause = undefined;
  }

  /** The requests with a `shardSelector`, as sent. */
  selectorsOf(
    verb: "list" | "watch",
    filter: (o: ListOptions & WatchOptions) => boolean = () => true,
  ): string[] {
    return this.requests
      .filter((r) => r.verb === verb && filter(r.options))
      .map((r) => r.options.shardSelector ?? "");
  }

  async list(options: ListOptions, signal?: AbortSignal): Promise<ObjectList<Item>> {
    signal?.throwIfAborted();
    this.requests.push({ verb: "list", options: { ...options } });
    await (this.paused ?? Promise.resolve());
    const selector = this.selectorOf(options);
    let items = Array.from(this.objects.values()).filter((o) => !selector || selector.matchesObject(o));
    if (options.limit !== undefined && options.limit > 0) items = items.slice(0, options.limit);
    return {
      metadata: {
        resourceVersion: this.resourceVersion,
        ...(selector ? { shardInfo: { selector: selector.canonical().toString() } } : {}),
      },
      items,
    };
  }

  watch(options: WatchOptions, onEvent: WatchEventHandler<Item>, signal?: AbortSignal): Promise<void> {
    this.requests.push({ verb: "watch", options: { ...options } });
    const selector = this.selectorOf(options);
    return new Promise<void>((resolve, reject) => {
      let done = false;
      const w: OpenWatch = {
        sent: options.shardSelector,
        onEvent: (event) => {
          if (done) return;
          if (event.type !== "BOOKMARK" && selector && !selector.matchesObject(event.object)) return;
          try {
            onEvent(event);
          } catch (err) {
            w.fail(err);
          }
        },
        fail: (err) => {
          if (done) return;
          done = true;
          this.open.delete(w);
          reject(toError(err));
        },
      };
      if (signal?.aborted) return w.fail(signal.reason);
      signal?.addEventListener("abort", () => w.fail(signal.reason), { once: true });
      void (this.paused ?? Promise.resolve()).then(() => {
        if (done) return;
        if (options.sendInitialEvents) {
          for (const o of this.objects.values()) w.onEvent({ type: "ADDED", object: o });
          w.onEvent({
            type: "BOOKMARK",
            object: {
              metadata: {
                resourceVersion: this.resourceVersion,
                annotations: { [INITIAL_EVENTS_END_ANNOTATION]: "true" },
              },
            } as unknown as Item,
          });
        } else {
          const from = Number(options.resourceVersion ?? "0");
          const oldest = this.log[0]?.rv;
          if (from > 0 && oldest !== undefined && from < oldest - 1) return w.fail(this.expired("watch"));
          if (from > 0 && oldest === undefined && from < this.rv) return w.fail(this.expired("watch"));
          for (const entry of this.log) if (entry.rv > from) w.onEvent(entry.event);
        }
        if (!done) this.open.add(w);
      });
    });
  }

  private emit(event: WatchEvent<Item>): void {
    this.log.push({ rv: this.rv, event });
    for (const w of Array.from(this.open)) w.onEvent(event);
  }

  private selectorOf(options: ListOptions | WatchOptions): ShardSelector | undefined {
    if (!this.serverFilters || !options.shardSelector) return undefined;
    return ShardSelector.parse(options.shardSelector);
  }

  private expired(verb: "list" | "watch"): ApiStatusError {
    return new ApiStatusError(
      { resource: this.resource, verb },
      410,
      "Expired",
      "too old",
      undefined,
      "event",
    );
  }

  /** A UUID-shaped UID from a counter, spread over the hash space like random ones (FNV-1a of near-equal strings is not). */
  private nextUid(): string {
    const h = createHash("sha256").update(String(++this.uidSeq)).digest("hex");
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }
}

/** The key of `obj`. */
export const keyOf = (obj: KubeObject): string => metaNamespaceKey(obj);
