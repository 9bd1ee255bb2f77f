import { createHash } from "node:crypto";
import { toError } from "@tessera/core";
import type { KubeObject, ListMeta, ObjectList, Status } from "@tessera/client";
import type { ListOptions, WatchOptions } from "../list-options.js";
import type { ListerWatcher, WatchEventHandler } from "../lister-watcher.js";
import { ApiStatusError, type ListWatchVerb } from "../list-watch-error.js";
import { metaNamespaceKey } from "../object-key.js";
import { INITIAL_EVENTS_END_ANNOTATION, type WatchEvent } from "../watch-event.js";

/** What a request's selectors select, as a server that understands them would apply them. */
export interface Selection<T> {
  /** Whether `object` is among what the request asked for. */
  matches(object: T): boolean;
  /**
   * The `metadata.shardInfo` every LIST page carries: a server that filtered
   * by `shardSelector` echoes the canonical selector it applied (KEP-5866).
   */
  shardInfo?: { selector?: string };
}

/** Options of an {@link InMemoryListerWatcher}. */
export interface InMemoryListerWatcherOptions<T> {
  /** The resource it names in errors (as kubectl names it); default `widgets.test.example`. */
  resource?: string;
  /** Serve only this namespace's objects, as a namespaced ListerWatcher does; default all. */
  namespace?: string;
  /**
   * Server-side filtering: the {@link Selection} a request's options ask for,
   * or `undefined` to serve that request unfiltered. The fake parses no
   * selector itself: without this hook `labelSelector`, `fieldSelector` and
   * `shardSelector` are sent (and recorded) but ignored, as by a server that
   * does not know them.
   */
  select?: (options: ListOptions | WatchOptions) => Selection<T> | undefined;
}

/** A request an {@link InMemoryListerWatcher} received, with its options as sent. */
export interface InMemoryRequest {
  readonly verb: ListWatchVerb;
  readonly options: ListOptions & WatchOptions;
}

/** Options of a write to an {@link InMemoryListerWatcher}. */
export interface InMemoryWriteOptions {
  /**
   * The change takes a resourceVersion but reaches no watch, neither live nor
   * replayed to a watch resuming from before it: only a LIST sees it (a change
   * a broken watch missed, to test what a relist recovers).
   */
  silent?: boolean;
}

/** One change, kept so a watch can resume from before it and a LIST can be served at an older resourceVersion. */
interface Change<T> {
  readonly rv: number;
  readonly key: string;
  /** The object before the change; absent for a creation. */
  readonly before: T | undefined;
  /** The object after the change; absent for a deletion. */
  readonly after: T | undefined;
  /** The object the event carries: `after`, or for a deletion the last state stamped with the deletion's resourceVersion. */
  readonly object: T;
  readonly silent: boolean;
}

interface OpenWatch<T> {
  readonly options: WatchOptions;
  readonly selection: Selection<T> | undefined;
  /** Changes up to this resourceVersion were accounted for when the watch started. */
  from: number;
  readonly closed: () => boolean;
  readonly send: (event: WatchEvent<T>) => void;
  readonly close: (error?: Error) => void;
}

interface ContinuePoint<T> {
  readonly rv: number;
  readonly rest: T[];
  readonly shardInfo: { selector?: string } | undefined;
}

/**
 * One collection held in memory behind the {@link ListerWatcher} contract,
 * behaving as the API server does, for unit tests of anything that lists and
 * watches (reflectors, informers, sharded reflectors):
 *
 * - writes ({@link InMemoryListerWatcher.put}, `create`, `update`, `delete`)
 *   take the next resourceVersion; creations get a UID unless they carry one,
 *   and an object keeps its UID across updates;
 * - LIST pages by `limit` with `continue` tokens (later pages at the first
 *   page's resourceVersion), serves `resourceVersionMatch: "Exact"` from the
 *   kept history, and answers 410 Expired for a token or resourceVersion
 *   older than the last {@link InMemoryListerWatcher.expire};
 * - WATCH with a resourceVersion replays the changes after it (as the watch
 *   cache does), or fails with a 410 ERROR event if they were compacted;
 *   without one it starts with the current objects as ADDED events;
 *   `sendInitialEvents` gets them followed by the `k8s.io/initial-events-end`
 *   bookmark; {@link InMemoryListerWatcher.bookmark} sends bookmarks;
 * - faults on demand: {@link InMemoryListerWatcher.expire},
 *   {@link InMemoryListerWatcher.failWatches},
 *   {@link InMemoryListerWatcher.endWatches}, silent writes, and
 *   {@link InMemoryListerWatcher.pause} to hold requests.
 *
 * Objects go in and out as copies (as JSON over the wire would), and events
 * are delivered from a later turn than the request, as a socket would. Every
 * request is recorded in {@link InMemoryListerWatcher.requests}.
 */
export class InMemoryListerWatcher<T extends KubeObject = KubeObject> implements ListerWatcher<T> {
  readonly resource: string;
  readonly namespace: string | undefined;
  /** Every LIST and WATCH received, in order, with its options as sent. */
  readonly requests: InMemoryRequest[] = [];
  private readonly select: InMemoryListerWatcherOptions<T>["select"];
  private readonly objects = new Map<string, T>();
  private history: Change<T>[] = [];
  private readonly open = new Set<OpenWatch<T>>();
  private readonly continues = new Map<string, ContinuePoint<T>>();
  private rv = 1;
  /** The history holds every change after this resourceVersion; older ones are compacted away. */
  private compactedRv = 1;
  private uidSeq = 0;
  private tokenSeq = 0;
  private held: { promise: Promise<void>; release: () => void } | undefined;

  constructor(options: InMemoryListerWatcherOptions<T> = {}) {
    this.resource = options.resource ?? "widgets.test.example";
    this.namespace = options.namespace;
    this.select = options.select;
  }

  /** The collection's current resourceVersion: that of the last write. */
  get resourceVersion(): string {
    return String(this.rv);
  }

  /** How many objects it holds (in every namespace). */
  get size(): number {
    return this.objects.size;
  }

  /** How many watches are open (started and not ended). */
  get openWatches(): number {
    return this.open.size;
  }

  /** How many LISTs it received. */
  get lists(): number {
    return this.requests.filter((r) => r.verb === "list").length;
  }

  /** How many WATCHes it received. */
  get watches(): number {
    return this.requests.filter((r) => r.verb === "watch").length;
  }

  /** Copies of the objects held, by `namespace/name` key, only those `predicate` accepts when given. */
  snapshot(predicate?: (object: T) => boolean): Map<string, T> {
    const out = new Map<string, T>();
    for (const [key, obj] of this.objects) {
      if (!predicate || predicate(obj)) out.set(key, structuredClone(obj));
    }
    return out;
  }

  /** A copy of the object at `key` (`namespace/name`, or `name` when cluster-scoped). */
  get(key: string): T | undefined {
    const obj = this.objects.get(key);
    return obj && structuredClone(obj);
  }

  /** Creates `obj`, or replaces the object of that key whatever its resourceVersion; returns what is stored. */
  put(obj: T, options: InMemoryWriteOptions = {}): T {
    return this.write(metaNamespaceKey(obj), obj, options);
  }

  /** Creates `obj`; throws if its key exists. */
  create(obj: T, options: InMemoryWriteOptions = {}): T {
    const key = metaNamespaceKey(obj);
    if (this.objects.has(key)) throw new Error(`create ${this.resource} ${key}: already exists`);
    return this.write(key, obj, options);
  }

  /**
   * Updates the object of `obj`'s key; throws if there is none, or if `obj`
   * carries a resourceVersion other than the stored one (a conflict).
   */
  update(obj: T, options: InMemoryWriteOptions = {}): T {
    const key = metaNamespaceKey(obj);
    const stored = this.objects.get(key);
    if (!stored) throw new Error(`update ${this.resource} ${key}: not found`);
    const sent = obj.metadata?.resourceVersion;
    if (sent !== undefined && sent !== stored.metadata?.resourceVersion) {
      throw new Error(
        `update ${this.resource} ${key}: conflict: resourceVersion ${sent}, stored ${stored.metadata?.resourceVersion}`,
      );
    }
    return this.write(key, obj, options);
  }

  /** Deletes the object at `key`; returns its final state, or `undefined` (and changes nothing) if there is none. */
  delete(key: string, options: InMemoryWriteOptions = {}): T | undefined {
    if (!this.objects.has(key)) return undefined;
    return this.write(key, undefined, options);
  }

  /** Sends a bookmark at the current resourceVersion to every open watch that allows bookmarks. */
  bookmark(): void {
    for (const w of Array.from(this.open)) {
      if (w.options.allowWatchBookmarks) w.send(this.bookmarkEvent());
    }
  }

  /**
   * Compacts the history, as etcd compaction does: a watch or an Exact LIST
   * from before now, and every `continue` token handed out, get a 410
   * Expired. Open watches (only those `which` accepts, when given) end with
   * a 410 ERROR event.
   */
  expire(which?: (options: WatchOptions) => boolean): void {
    this.history = [];
    this.compactedRv = this.rv;
    this.continues.clear();
    for (const w of Array.from(this.open)) {
      if (!which || which(w.options)) w.close(this.expired("watch"));
    }
  }

  /** Fails open watches (only those `which` accepts, when given) with `error`, as a broken stream or an ERROR event. */
  failWatches(error: Error, which?: (options: WatchOptions) => boolean): void {
    for (const w of Array.from(this.open)) if (!which || which(w.options)) w.close(error);
  }

  /** Ends open watches cleanly (only those `which` accepts, when given), as the server does at `timeoutSeconds`. */
  endWatches(which?: (options: WatchOptions) => boolean): void {
    for (const w of Array.from(this.open)) if (!which || which(w.options)) w.close();
  }

  /** Holds new LISTs and WATCHes until {@link InMemoryListerWatcher.resume}; they are then answered as of that moment. */
  pause(): void {
    if (this.held) return;
    let release!: () => void;
    const promise = new Promise<void>((resolve) => (release = resolve));
    this.held = { promise, release };
  }

  /** Answers the requests held since {@link InMemoryListerWatcher.pause}. */
  resume(): void {
    this.held?.release();
    this.held = undefined;
  }

  async list(options: ListOptions, signal?: AbortSignal): Promise<ObjectList<T>> {
    signal?.throwIfAborted();
    this.requests.push({ verb: "list", options: { ...options } });
    await (this.held?.promise ?? Promise.resolve());
    signal?.throwIfAborted();
    if (options.continue) {
      const point = this.continues.get(options.continue);
      this.continues.delete(options.continue);
      if (!point) throw this.expired("list", "the continue token is expired or unknown");
      return this.page(point.rv, point.rest, options.limit, point.shardInfo);
    }
    const selection = this.select?.(options);
    const rv = this.listResourceVersion(options);
    const state = rv === this.rv ? this.objects : this.stateAt(rv);
    const items = Array.from(state.entries())
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, obj]) => obj)
      .filter((obj) => this.visible(obj, selection));
    return this.page(rv, items, options.limit, selection?.shardInfo);
  }

  watch(options: WatchOptions, onEvent: WatchEventHandler<T>, signal?: AbortSignal): Promise<void> {
    this.requests.push({ verb: "watch", options: { ...options } });
    const selection = this.select?.(options);
    return new Promise<void>((resolve, reject) => {
      let done = false;
      const onAbort = (): void => w.close(toError(signal?.reason));
      const w: OpenWatch<T> = {
        options: { ...options },
        selection,
        from: Number.POSITIVE_INFINITY,
        closed: () => done,
        send: (event) => {
          if (done) return;
          try {
            onEvent(structuredClone(event));
          } catch (err) {
            w.close(toError(err));
          }
        },
        close: (error) => {
          if (done) return;
          done = true;
          this.open.delete(w);
          signal?.removeEventListener("abort", onAbort);
          if (error) reject(error);
          else resolve();
        },
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      // The stream starts on a later turn, as a socket's would.
      void (this.held?.promise ?? Promise.resolve()).then(() => {
        if (!done) this.start(w);
      });
    });
  }

  private start(w: OpenWatch<T>): void {
    const rv = w.options.resourceVersion;
    if (w.options.sendInitialEvents || rv === undefined || rv === "" || rv === "0") {
      w.from = this.rv;
      // The current state as ADDED events: a watch-list's initial events, or a legacy watch from "any" state.
      for (const obj of this.objects.values()) {
        if (this.visible(obj, w.selection)) w.send({ type: "ADDED", object: obj });
      }
      if (w.options.sendInitialEvents) {
        const end = this.bookmarkEvent();
        end.object.metadata = {
          ...end.object.metadata,
          annotations: { [INITIAL_EVENTS_END_ANNOTATION]: "true" },
        };
        w.send(end);
      }
    } else {
      const from = Number(rv);
      if (!Number.isSafeInteger(from) || from < 0) {
        return w.close(
          this.statusError("watch", 400, "BadRequest", `invalid resourceVersion "${rv}"`, "response"),
        );
      }
      if (from < this.compactedRv) return w.close(this.expired("watch"));
      w.from = from;
      for (const change of this.history) if (change.rv > from) this.deliver(w, change);
    }
    // Still open unless a handler threw: from here on it gets live changes.
    if (!w.closed()) this.open.add(w);
  }

  private write(key: string, next: T | undefined, options: InMemoryWriteOptions): T {
    const before = this.objects.get(key);
    const rv = ++this.rv;
    let object: T;
    if (next) {
      const copy = structuredClone(next);
      object = {
        ...copy,
        metadata: {
          ...copy.metadata,
          uid: before?.metadata?.uid ?? copy.metadata?.uid ?? this.nextUid(),
          resourceVersion: String(rv),
        },
      };
      this.objects.set(key, object);
    } else {
      object = stamped(before as T, rv);
      this.objects.delete(key);
    }
    const change: Change<T> = {
      rv,
      key,
      before,
      after: next && object,
      object,
      silent: options.silent === true,
    };
    this.history.push(change);
    for (const w of Array.from(this.open)) this.deliver(w, change);
    return structuredClone(object);
  }

  /** Sends `change` to `w` as the event it makes for that watch's selection, if any. */
  private deliver(w: OpenWatch<T>, change: Change<T>): void {
    if (change.silent || change.rv <= w.from) return;
    const was = change.before !== undefined && this.visible(change.before, w.selection);
    const is = change.after !== undefined && this.visible(change.after, w.selection);
    // An object that stops matching leaves the watch as DELETED (its last matching state, at the
    // change's resourceVersion, as the watch cache sends it); one that starts matching enters as ADDED.
    if (was && is) w.send({ type: "MODIFIED", object: change.object });
    else if (is) w.send({ type: "ADDED", object: change.object });
    else if (was) {
      const object = change.after ? stamped(change.before, change.rv) : change.object;
      w.send({ type: "DELETED", object });
    }
  }

  private visible(obj: T, selection: Selection<T> | undefined): boolean {
    if (this.namespace !== undefined && obj.metadata?.namespace !== this.namespace) return false;
    return !selection || selection.matches(obj);
  }

  /** The resourceVersion a LIST is served at, or the error the server would answer. */
  private listResourceVersion(options: ListOptions): number {
    const rv = options.resourceVersion;
    if (rv === undefined || rv === "" || rv === "0") return this.rv;
    const n = Number(rv);
    if (!Number.isSafeInteger(n) || n < 0) {
      throw this.statusError("list", 400, "BadRequest", `invalid resourceVersion "${rv}"`, "response");
    }
    if (n > this.rv) {
      throw this.statusError(
        "list",
        504,
        "Timeout",
        `Too large resource version: ${n}, current: ${this.rv}`,
        "response",
      );
    }
    if (options.resourceVersionMatch !== "Exact") return this.rv;
    if (n < this.compactedRv) throw this.expired("list");
    return n;
  }

  /** The objects as they were at resourceVersion `rv` (not older than the history), undoing later changes. */
  private stateAt(rv: number): Map<string, T> {
    const state = new Map(this.objects);
    for (let i = this.history.length - 1; i >= 0; i--) {
      const change = this.history[i] as Change<T>;
      if (change.rv <= rv) break;
      if (change.before) state.set(change.key, change.before);
      else state.delete(change.key);
    }
    return state;
  }

  private page(
    rv: number,
    items: T[],
    limit: number | undefined,
    shardInfo: { selector?: string } | undefined,
  ): ObjectList<T> {
    const metadata: ListMeta = { resourceVersion: String(rv) };
    if (shardInfo) metadata.shardInfo = { ...shardInfo };
    let page = items;
    if (limit !== undefined && limit > 0 && items.length > limit) {
      page = items.slice(0, limit);
      const rest = items.slice(limit);
      const token = `${rv}-${++this.tokenSeq}`;
      this.continues.set(token, { rv, rest, shardInfo });
      metadata.continue = token;
      metadata.remainingItemCount = rest.length;
    }
    return { metadata, items: page.map((obj) => structuredClone(obj)) };
  }

  private bookmarkEvent(): WatchEvent<T> {
    return { type: "BOOKMARK", object: { metadata: { resourceVersion: this.resourceVersion } } as T };
  }

  private expired(verb: ListWatchVerb, detail = "too old resource version"): ApiStatusError {
    // A watch learns of it from an ERROR event; a LIST from the response.
    return this.statusError(verb, 410, "Expired", detail, verb === "watch" ? "event" : "response");
  }

  private statusError(
    verb: ListWatchVerb,
    code: number,
    reason: string,
    message: string,
    source: "response" | "event",
  ): ApiStatusError {
    const status: Status = { kind: "Status", apiVersion: "v1", status: "Failure", message, reason, code };
    return new ApiStatusError(
      {
        resource: this.resource,
        verb,
        ...(this.namespace !== undefined ? { namespace: this.namespace } : {}),
      },
      code,
      reason,
      message,
      status,
      source,
    );
  }

  /** A UUID-shaped UID from a counter, spread over the hash space as random ones are (consecutive strings hashed by FNV-1a are not). */
  private nextUid(): string {
    const h = createHash("sha256").update(String(++this.uidSeq)).digest("hex");
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }
}

/** `obj` (shallowly copied) at resourceVersion `rv`. */
function stamped<T extends KubeObject>(obj: T, rv: number): T {
  return { ...obj, metadata: { ...obj.metadata, resourceVersion: String(rv) } };
}
