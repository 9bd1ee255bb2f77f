import { toError } from "@tessera/core";
import type { KubeObject, ObjectList } from "@tessera/client";
import type { ListOptions, WatchOptions } from "../list-options.js";
import type { ListerWatcher, WatchEventHandler } from "../lister-watcher.js";
import type { WatchEvent } from "../watch-event.js";

/** A LIST the code under test made, waiting for the test to answer it. */
export interface ScriptedList<T> {
  verb: "list";
  /** The options, as sent. */
  options: ListOptions;
  signal: AbortSignal | undefined;
  /** Answers with `list` (a copy of it, as a server's JSON would be). */
  respond(list: ObjectList<T>): void;
  /** Fails the LIST with `err` (an `ApiStatusError`, a `ConnectionError`...). */
  fail(err: Error): void;
}

/** A WATCH the code under test opened, driven by the test. */
export interface ScriptedWatch<T> {
  verb: "watch";
  /** The options, as sent. */
  options: WatchOptions;
  signal: AbortSignal | undefined;
  /** Delivers events (copies), as the stream would; throws if the watch already ended. */
  emit(...events: WatchEvent<T>[]): void;
  /** The server closes the stream cleanly. */
  end(): void;
  /** The stream fails with `err` (an ERROR event is an `ApiStatusError` with `source: "event"`). */
  fail(err: Error): void;
  /** Whether the caller aborted it. */
  readonly aborted: boolean;
  /** Whether it is over (ended, failed, aborted, or its handler threw). */
  readonly closed: boolean;
}

/** A call made to a {@link ScriptedListerWatcher}. */
export type ScriptedCall<T> = ScriptedList<T> | ScriptedWatch<T>;

/** Options of a {@link ScriptedListerWatcher}. */
export interface ScriptedListerWatcherOptions {
  /** The resource it names in logs and errors; default `configmaps`. */
  resource?: string;
  /** The namespace it claims to list and watch; default none (all namespaces). */
  namespace?: string;
}

/**
 * A {@link ListerWatcher} whose every call is handed to the test, which
 * answers it: the test sees each LIST and WATCH with its exact options and
 * decides what the server says, when. For unit tests of a reflector (or
 * anything driving a ListerWatcher), typically on a `FakeClock`.
 *
 * It needs no clock: {@link ScriptedListerWatcher.next} only lets promise
 * chains settle (turns of the event loop), so no time passes on any clock.
 */
export class ScriptedListerWatcher<T extends KubeObject = KubeObject> implements ListerWatcher<T> {
  readonly resource: string;
  readonly namespace: string | undefined;
  /** Every call made, in order, taken or not. */
  readonly calls: ScriptedCall<T>[] = [];
  private taken = 0;

  constructor(options: ScriptedListerWatcherOptions = {}) {
    this.resource = options.resource ?? "configmaps";
    this.namespace = options.namespace;
  }

  list(options: ListOptions, signal?: AbortSignal): Promise<ObjectList<T>> {
    return new Promise((resolve, reject) => {
      let done = false;
      const settle = (fn: () => void): void => {
        if (done) return;
        done = true;
        fn();
      };
      signal?.addEventListener("abort", () => settle(() => reject(toError(signal.reason))), {
        once: true,
      });
      this.calls.push({
        verb: "list",
        options: { ...options },
        signal,
        respond: (list) => settle(() => resolve(structuredClone(list))),
        fail: (err) => settle(() => reject(err)),
      });
    });
  }

  watch(options: WatchOptions, onEvent: WatchEventHandler<T>, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      let closed = false;
      let aborted = false;
      const settle = (fn: () => void): void => {
        if (closed) return;
        closed = true;
        fn();
      };
      signal?.addEventListener(
        "abort",
        () => {
          aborted = true;
          settle(() => reject(toError(signal.reason)));
        },
        { once: true },
      );
      this.calls.push({
        verb: "watch",
        options: { ...options },
        signal,
        emit: (...events) => {
          for (const event of events) {
            if (closed) throw new Error("emit on a closed watch");
            try {
              onEvent(structuredClone(event));
            } catch (err) {
              settle(() => reject(toError(err)));
            }
          }
        },
        end: () => settle(() => resolve()),
        fail: (err) => settle(() => reject(err)),
        get aborted() {
          return aborted;
        },
        get closed() {
          return closed;
        },
      });
    });
  }

  /**
   * Waits for the next call not yet taken (letting promise chains settle, up
   * to 250 turns of the event loop; no time passes) and takes it. Throws if
   * none comes.
   */
  async next(): Promise<ScriptedCall<T>> {
    for (let i = 0; i < 250 && this.calls.length <= this.taken; i++) {
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    const call = this.calls[this.taken];
    if (!call) throw new Error(`no call #${this.taken + 1} was made (calls so far: ${this.describe()})`);
    this.taken++;
    return call;
  }

  /** {@link ScriptedListerWatcher.next}, which must be a LIST. */
  async nextList(): Promise<ScriptedList<T>> {
    const call = await this.next();
    if (call.verb !== "list")
      throw new Error(`expected a list, got a watch with ${JSON.stringify(call.options)}`);
    return call;
  }

  /** {@link ScriptedListerWatcher.next}, which must be a WATCH. */
  async nextWatch(): Promise<ScriptedWatch<T>> {
    const call = await this.next();
    if (call.verb !== "watch")
      throw new Error(`expected a watch, got a list with ${JSON.stringify(call.options)}`);
    return call;
  }

  /** How many calls were made and not yet taken with {@link ScriptedListerWatcher.next}. */
  get untaken(): number {
    return this.calls.length - this.taken;
  }

  /** The calls so far, for a failure message: `list({...}), watch({...})`. */
  describe(): string {
    return this.calls.map((c) => `${c.verb}(${JSON.stringify(c.options)})`).join(", ") || "none";
  }
}
