import { toError, type Clock } from "@tessera/core";
import type { ListerWatcherRequest } from "@tessera/informers";
import {
  INITIAL_EVENTS_END_ANNOTATION,
  type ListerWatcher,
  type ListOptions,
  type WatchEvent,
  type WatchEventHandler,
  type WatchOptions,
} from "@tessera/reflector";
import {
  describeResource,
  labelMatcher,
  type KubeObject,
  type ObjectList,
  type Resource,
} from "@tessera/client";
import type { FakeChange, FakeClient } from "./fake-client.js";

/** One change of this collection, kept so a watch can resume from before it. */
interface Change {
  readonly rv: number;
  readonly before: KubeObject | undefined;
  readonly after: KubeObject | undefined;
  readonly object: KubeObject;
}

interface OpenWatch {
  readonly send: (event: WatchEvent<KubeObject>) => void;
  readonly close: (error?: Error) => void;
}

/**
 * Lists and watches one collection of a {@link FakeClient} behind the
 * reflector's `ListerWatcher` contract, as the API server's watch cache
 * serves it: a watch-list's initial events and end bookmark, a watch from a
 * resourceVersion replaying the changes after it, live events at the
 * fake's resourceVersions (delivered on a later microtask, as from a
 * socket), objects entering or leaving the selection as ADDED or DELETED,
 * and a clean end at `timeoutSeconds` on the clock. Selection by namespace,
 * label selector, and field selector on `metadata.name` and
 * `metadata.namespace`. The test manager's informers are built on it.
 */
export class FakeListerWatcher implements ListerWatcher<KubeObject> {
  readonly resource: string;
  readonly handle: Resource;
  readonly namespace: string | undefined;
  private readonly matches: (object: KubeObject) => boolean;
  private readonly metadataOnly: boolean;
  private readonly current = new Map<string, KubeObject>();
  private readonly history: Change[] = [];
  private readonly open = new Set<OpenWatch>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly fake: FakeClient,
    request: ListerWatcherRequest,
    private readonly clock: Clock,
  ) {
    const resource = request.resource;
    this.handle = resource;
    this.resource = describeResource(resource);
    this.namespace = resource.scope === "Namespaced" && request.namespace ? request.namespace : undefined;
    this.metadataOnly = request.metadataOnly;
    const labels = request.labelSelector ? labelMatcher(request.labelSelector) : () => true;
    const fields = fieldMatcher(request.fieldSelector, this.resource);
    this.matches = (object) =>
      (this.namespace === undefined || object.metadata?.namespace === this.namespace) &&
      labels(object.metadata?.labels ?? {}) &&
      fields(object);
    for (const object of fake.peekAll(resource)) this.current.set(keyOf(object), object);
    this.unsubscribe = fake.onChange((change) => {
      if (sameResource(change.resource, resource)) this.record(change);
    });
  }

  /** Stops following the fake (its open watches end): the fake may outlive the test manager. */
  close(): void {
    this.unsubscribe();
    for (const w of [...this.open]) w.close();
  }

  list(_options: ListOptions, signal?: AbortSignal): Promise<ObjectList<KubeObject>> {
    signal?.throwIfAborted();
    return Promise.resolve({
      metadata: { resourceVersion: this.fake.resourceVersion },
      items: this.selected().map((o) => this.shown(o)),
    });
  }

  watch(options: WatchOptions, onEvent: WatchEventHandler<KubeObject>, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let done = false;
      let timer: { cancel(): void } | undefined;
      const onAbort = (): void => w.close(toError(signal?.reason));
      const w: OpenWatch = {
        send: (event) => {
          if (done) return;
          try {
            onEvent(event);
          } catch (error) {
            w.close(toError(error));
          }
        },
        close: (error) => {
          if (done) return;
          done = true;
          this.open.delete(w);
          timer?.cancel();
          signal?.removeEventListener("abort", onAbort);
          if (error) reject(error);
          else resolve();
        },
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      // The stream starts on a later turn, as a socket's would.
      queueMicrotask(() => {
        if (done) return;
        const rv = options.resourceVersion;
        if (options.sendInitialEvents || rv === undefined || rv === "" || rv === "0") {
          for (const object of this.selected()) w.send({ type: "ADDED", object: this.shown(object) });
          if (options.sendInitialEvents) {
            const end = this.bookmark();
            end.metadata = { ...end.metadata, annotations: { [INITIAL_EVENTS_END_ANNOTATION]: "true" } };
            w.send({ type: "BOOKMARK", object: end });
          }
        } else {
          for (const change of this.history) if (change.rv > Number(rv)) this.deliver(w, change);
        }
        if (done) return;
        this.open.add(w);
        if (options.timeoutSeconds)
          timer = this.clock.setTimer(options.timeoutSeconds * 1000, () => w.close());
      });
    });
  }

  private record(change: FakeChange): void {
    const key = keyOf(change.object);
    const before = this.current.get(key);
    const after = change.type === "DELETED" ? undefined : change.object;
    if (after) this.current.set(key, after);
    else this.current.delete(key);
    const recorded: Change = {
      rv: Number(change.object.metadata?.resourceVersion),
      before,
      after,
      object: change.object,
    };
    this.history.push(recorded);
    if (this.open.size === 0) return;
    const open = [...this.open];
    queueMicrotask(() => {
      for (const w of open) this.deliver(w, recorded);
    });
  }

  /** `change` as the event it makes for a watch of this selection, if any. */
  private deliver(w: OpenWatch, change: Change): void {
    const was = change.before !== undefined && this.matches(change.before);
    const is = change.after !== undefined && this.matches(change.after);
    const object = this.shown(change.object);
    if (was && is) w.send({ type: "MODIFIED", object });
    else if (is) w.send({ type: "ADDED", object });
    else if (was) {
      // Leaving the selection: its last state that matched, at the change's resourceVersion.
      const last = change.after && change.before ? this.shown(change.before) : object;
      last.metadata = { ...last.metadata, resourceVersion: String(change.rv) };
      w.send({ type: "DELETED", object: last });
    }
  }

  private selected(): KubeObject[] {
    return [...this.current.values()].filter(this.matches);
  }

  /** A copy of `object` as this request receives it: metadata only for a metadata-only request. */
  private shown(object: KubeObject): KubeObject {
    const copy = structuredClone(object);
    if (!this.metadataOnly) return copy;
    return { apiVersion: "meta.k8s.io/v1", kind: "PartialObjectMetadata", metadata: copy.metadata ?? {} };
  }

  private bookmark(): KubeObject {
    return { metadata: { resourceVersion: this.fake.resourceVersion } };
  }
}

function keyOf(object: KubeObject): string {
  const meta = object.metadata ?? {};
  return meta.namespace ? `${meta.namespace}/${meta.name ?? ""}` : (meta.name ?? "");
}

function sameResource(a: Resource, b: Resource): boolean {
  return a.group === b.group && a.version === b.version && a.plural === b.plural;
}

/** A field selector on `metadata.name` and `metadata.namespace` (`=`, `==`, `!=`), as every kind supports. */
function fieldMatcher(selector: string | undefined, resource: string): (object: KubeObject) => boolean {
  if (!selector) return () => true;
  const tests = selector.split(",").map((term) => {
    const match = /^\s*([^!=\s]+)\s*(==|=|!=)\s*(.*?)\s*$/.exec(term);
    const field = match?.[1];
    if (!match || (field !== "metadata.name" && field !== "metadata.namespace")) {
      throw new TypeError(
        `the test manager's cache of ${resource}: field selector "${term}" is not supported; it takes metadata.name and metadata.namespace with =, == or !=`,
      );
    }
    const negate = match[2] === "!=";
    const value = match[3] ?? "";
    return (object: KubeObject) =>
      (((field === "metadata.name" ? object.metadata?.name : object.metadata?.namespace) ?? "") === value) !==
      negate;
  });
  return (object) => tests.every((test) => test(object));
}
