import type { Clock, GroupCounter } from "@tessera/core";
import type { SharedIndexInformer } from "@tessera/informers";
import { DeletedFinalStateUnknown } from "@tessera/reflector";
import type { KubeObject, Resource } from "@tessera/client";

/** What a cached read waited for, as the waits metric counts it. */
export type ReadYourWritesOutcome = "seen" | "timeout";

/** Options of a {@link ReadYourWrites}. */
export interface ReadYourWritesOptions {
  /** How long after a write a read of the object may wait for the cache to see it, in ms (> 0). */
  readonly timeoutMs: number;
  readonly clock: Clock;
  /** Counts each read that had to wait, by outcome (`tessera_client_read_your_writes_waits_total`). */
  readonly waits: GroupCounter;
}

/** A write whose resourceVersion the cache has not delivered yet. */
interface Expectation {
  readonly resourceVersion: string;
  /** `clock.now()` after which no read waits for it any more. */
  readonly deadline: number;
  /** Reads waiting for it; each is called once, when it is seen (or replaced by a later write). */
  readonly waiters: Set<() => void>;
}

/**
 * The manager client's read-your-writes consistency: after the client writes
 * an object, a cached read of that object waits, for at most `timeoutMs`
 * from the write, until the cache has delivered the written resourceVersion
 * (or the object's deletion).
 *
 * resourceVersions are compared for equality only. The API contract calls
 * them opaque strings, but a watch delivers the changes of one object in
 * order: once the cache has delivered the written version, every later event
 * of the key is later than the write, so the expectation is simply dropped.
 * What equality cannot see is a version the cache skips (a relist after a
 * broken watch that lands past it): the read then waits until the deadline
 * and is counted as a `timeout`, as is the write of an object no cache
 * holds (one outside a cache's label selector, another member's shard).
 *
 * Each kind written gets one event handler on each of its caches, added at
 * its first write; a read of an object with no pending write costs one map
 * lookup.
 */
export class ReadYourWrites {
  private readonly pending = new Map<string, Map<string, Expectation>>();
  private readonly watched = new WeakSet<SharedIndexInformer<KubeObject>>();
  private lastSweep: number;

  constructor(private readonly options: ReadYourWritesOptions) {
    this.lastSweep = options.clock.now();
  }

  /**
   * Records that the client wrote `written` (as the server returned it) and
   * that `informers` are the caches reads of its kind use.
   */
  wrote(
    resource: Resource,
    written: KubeObject,
    informers: readonly SharedIndexInformer<KubeObject>[],
  ): void {
    const meta = written.metadata;
    const resourceVersion = meta?.resourceVersion;
    if (!resourceVersion || !meta?.name || informers.length === 0) return;
    const key = objectKey(resource, meta.namespace, meta.name);
    // Already cached (a write that changed nothing returns the version cached): nothing to wait for.
    if (informers.some((i) => i.lister.getByKey(key)?.metadata?.resourceVersion === resourceVersion)) return;
    const now = this.options.clock.now();
    this.sweep(now);
    const kind = this.kindOf(resource);
    for (const informer of informers) this.watch(kind, informer);
    const before = kind.get(key);
    kind.set(key, { resourceVersion, deadline: now + this.options.timeoutMs, waiters: new Set() });
    // A read that began before this write waited for the earlier one only: it is released.
    if (before) for (const wake of before.waiters) wake();
  }

  /**
   * Waits until the cache has delivered the pending writes of the objects
   * `keys` names (`undefined`: every pending write of the kind in
   * `namespace`, for a list), or their deadlines pass, or `signal` aborts.
   */
  async settled(
    resource: Resource,
    informers: readonly SharedIndexInformer<KubeObject>[],
    keys: readonly string[] | undefined,
    namespace: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const kind = this.pending.get(kindKey(resource));
    if (kind === undefined || kind.size === 0) return;
    const now = this.options.clock.now();
    const waiting: Array<[string, Expectation]> = [];
    const candidates =
      keys === undefined
        ? [...kind].filter(([key]) => namespace === undefined || key.startsWith(`${namespace}/`))
        : keys.flatMap((key) => {
            const e = kind.get(key);
            return e ? [[key, e] as [string, Expectation]] : [];
          });
    for (const [key, expectation] of candidates) {
      if (expectation.deadline <= now) {
        kind.delete(key);
      } else if (
        informers.some(
          (i) => i.lister.getByKey(key)?.metadata?.resourceVersion === expectation.resourceVersion,
        )
      ) {
        kind.delete(key);
      } else {
        waiting.push([key, expectation]);
      }
    }
    if (waiting.length === 0) return;
    let timedOut = false;
    for (const [key, expectation] of waiting) {
      if (signal?.aborted) break;
      const seen = await this.waitFor(kind, key, expectation, signal);
      if (!seen) timedOut = true;
    }
    signal?.throwIfAborted();
    this.options.waits.add(1, { outcome: timedOut ? "timeout" : "seen" });
  }

  /** Resolves true once `expectation` is delivered or replaced, false at its deadline or on abort. */
  private waitFor(
    kind: Map<string, Expectation>,
    key: string,
    expectation: Expectation,
    signal: AbortSignal | undefined,
  ): Promise<boolean> {
    if (kind.get(key) !== expectation) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const finish = (seen: boolean) => {
        timer.cancel();
        signal?.removeEventListener("abort", abort);
        expectation.waiters.delete(wake);
        resolve(seen);
      };
      const wake = () => finish(true);
      const abort = () => finish(false);
      const timer = this.options.clock.setTimer(expectation.deadline - this.options.clock.now(), () => {
        if (kind.get(key) === expectation) kind.delete(key);
        finish(false);
      });
      expectation.waiters.add(wake);
      signal?.addEventListener("abort", abort, { once: true });
    });
  }

  private kindOf(resource: Resource): Map<string, Expectation> {
    const key = kindKey(resource);
    let kind = this.pending.get(key);
    if (kind === undefined) {
      kind = new Map();
      this.pending.set(key, kind);
    }
    return kind;
  }

  /** Adds the handler that marks writes delivered to `informer`, once per informer. */
  private watch(kind: Map<string, Expectation>, informer: SharedIndexInformer<KubeObject>): void {
    if (this.watched.has(informer)) return;
    this.watched.add(informer);
    const delivered = (object: KubeObject, deleted: boolean) => {
      if (kind.size === 0) return;
      const meta = object.metadata;
      const key = meta?.namespace ? `${meta.namespace}/${meta.name ?? ""}` : (meta?.name ?? "");
      const expectation = kind.get(key);
      if (expectation === undefined) return;
      if (!deleted && meta?.resourceVersion !== expectation.resourceVersion) return;
      kind.delete(key);
      for (const wake of expectation.waiters) wake();
    };
    informer.addEventHandler(
      {
        onAdd: (object) => delivered(object, false),
        onUpdate: (_, object) => delivered(object, false),
        onDelete: (object) =>
          delivered(object instanceof DeletedFinalStateUnknown ? object.obj : object, true),
      },
      { name: "read-your-writes" },
    );
  }

  /** Drops the expectations past their deadline, at most once per timeout, so unread writes do not pile up. */
  private sweep(now: number): void {
    if (now - this.lastSweep < this.options.timeoutMs) return;
    this.lastSweep = now;
    for (const kind of this.pending.values()) {
      for (const [key, expectation] of kind) {
        if (expectation.deadline <= now && expectation.waiters.size === 0) kind.delete(key);
      }
    }
  }
}

function kindKey(resource: Resource): string {
  return `${resource.plural}.${resource.group}`;
}

/** The cache's key of an object: `namespace/name`, or `name` for a cluster-scoped kind. */
export function objectKey(resource: Resource, namespace: string | undefined, name: string): string {
  return resource.scope === "Namespaced" && namespace ? `${namespace}/${name}` : name;
}
