import type { ListerWatcher, ListOptions, WatchEventHandler, WatchOptions } from "../../src/index.js";
import type { KubeObject, ObjectList } from "@tessera/client";

/** A call that went through a {@link RecordingListerWatcher}, with how it ended. */
export interface RecordedCall {
  verb: "list" | "watch";
  options: ListOptions | WatchOptions;
  outcome?: "ok" | "error";
  error?: unknown;
  items?: number;
  /** A list's `metadata.resourceVersion`. */
  resourceVersion?: string;
}

/** Wraps a real {@link ListerWatcher} and records every call it passes on. */
export class RecordingListerWatcher<T extends KubeObject> implements ListerWatcher<T> {
  readonly calls: RecordedCall[] = [];

  constructor(private readonly inner: ListerWatcher<T>) {}

  get resource(): string {
    return this.inner.resource;
  }

  get namespace(): string | undefined {
    return this.inner.namespace;
  }

  async list(options: ListOptions, signal?: AbortSignal): Promise<ObjectList<T>> {
    const call: RecordedCall = { verb: "list", options: { ...options } };
    this.calls.push(call);
    try {
      const list = await this.inner.list(options, signal);
      call.outcome = "ok";
      call.items = list.items.length;
      call.resourceVersion = list.metadata?.resourceVersion;
      return list;
    } catch (err) {
      call.outcome = "error";
      call.error = err;
      throw err;
    }
  }

  async watch(options: WatchOptions, onEvent: WatchEventHandler<T>, signal?: AbortSignal): Promise<void> {
    const call: RecordedCall = { verb: "watch", options: { ...options } };
    this.calls.push(call);
    try {
      await this.inner.watch(options, onEvent, signal);
      call.outcome = "ok";
    } catch (err) {
      call.outcome = "error";
      call.error = err;
      throw err;
    }
  }
}
