import type {
  KubeObject,
  ListerWatcher,
  ListOptions,
  ObjectList,
  WatchEvent,
  WatchEventHandler,
  WatchOptions,
} from "../../src/index.js";
import type { FakeClock } from "@tessera/core/testing";

/** A LIST the reflector made, waiting for the test to answer it. */
export interface ScriptedList<T> {
  verb: "list";
  options: ListOptions;
  signal: AbortSignal | undefined;
  respond(list: ObjectList<T>): void;
  fail(err: unknown): void;
}

/** A WATCH the reflector opened, driven by the test. */
export interface ScriptedWatch<T> {
  verb: "watch";
  options: WatchOptions;
  signal: AbortSignal | undefined;
  /** Delivers events, as the stream would; throws if the watch already ended. */
  emit(...events: WatchEvent<T>[]): void;
  /** The server closes the stream cleanly. */
  end(): void;
  /** The stream fails with `err`. */
  fail(err: unknown): void;
  /** Whether the reflector aborted it. */
  readonly aborted: boolean;
  /** Whether it is over (ended, failed, aborted, or its handler threw). */
  readonly closed: boolean;
}

export type ScriptedCall<T> = ScriptedList<T> | ScriptedWatch<T>;

/**
 * A {@link ListerWatcher} whose every call is handed to the test, which
 * answers it. For unit tests of the reflector with a fake clock.
 */
export class ScriptedListerWatcher<T extends KubeObject = KubeObject> implements ListerWatcher<T> {
  readonly resource = "configmaps";
  readonly namespace: string | undefined = undefined;
  readonly calls: ScriptedCall<T>[] = [];
  private taken = 0;

  constructor(private readonly clock: FakeClock) {}

  list(options: ListOptions, signal?: AbortSignal): Promise<ObjectList<T>> {
    return new Promise((resolve, reject) => {
      let done = false;
      const settle = (fn: () => void): void => {
        if (done) return;
        done = true;
        fn();
      };
      signal?.addEventListener("abort", () => settle(() => reject(signal.reason)), { once: true });
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
          settle(() => reject(signal.reason));
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
              settle(() => reject(err));
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

  /** Waits (letting promises settle, no time passing) for the reflector's next call. */
  async next(): Promise<ScriptedCall<T>> {
    for (let i = 0; i < 50 && this.calls.length <= this.taken; i++) await this.clock.flush();
    const call = this.calls[this.taken];
    if (!call) throw new Error(`no call #${this.taken + 1} was made (calls so far: ${this.describe()})`);
    this.taken++;
    return call;
  }

  async nextList(): Promise<ScriptedList<T>> {
    const call = await this.next();
    if (call.verb !== "list")
      throw new Error(`expected a list, got a watch with ${JSON.stringify(call.options)}`);
    return call;
  }

  async nextWatch(): Promise<ScriptedWatch<T>> {
    const call = await this.next();
    if (call.verb !== "watch")
      throw new Error(`expected a watch, got a list with ${JSON.stringify(call.options)}`);
    return call;
  }

  /** How many calls were made and not yet taken with {@link next}. */
  get untaken(): number {
    return this.calls.length - this.taken;
  }

  describe(): string {
    return this.calls.map((c) => `${c.verb}(${JSON.stringify(c.options)})`).join(", ") || "none";
  }
}
