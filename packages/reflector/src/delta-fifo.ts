import { DeletedFinalStateUnknown } from "./deleted-final-state-unknown.js";
import { compressDeltas, type Delta, type DeltaBatch, type DeltaType } from "./delta.js";
import type { KubeObject } from "@tessera/client";
import { metaNamespaceKey, type KeyFunc } from "./object-key.js";
import type { KeyListerGetter, ReflectorStore } from "./store.js";

/** Options of a {@link DeltaFIFO}. */
export interface DeltaFIFOOptions<T> {
  /** How objects are keyed; default {@link metaNamespaceKey}. */
  keyFunc?: KeyFunc<T>;
  /**
   * The consumer's cache (an informer's indexer). With it, a `replace` queues
   * tombstones for cached objects missing from the new list, `delete` of an
   * object neither cached nor queued is ignored, and `resync` has something to
   * resync. Without it every `delete` is queued.
   */
  knownObjects?: KeyListerGetter<T>;
  /** Queue `Replaced` (default) rather than `Sync` deltas for the objects of a `replace`. */
  emitDeltaTypeReplaced?: boolean;
}

/** Raised by {@link DeltaFIFO} writes after {@link DeltaFIFO.close}. */
export class FifoClosedError extends Error {
  override name = "FifoClosedError";
}

/**
 * A queue of changes per object key, between a reflector (the producer) and
 * an informer (the consumer):
 * - ordered: keys come out in the order they were first queued; each key's
 *   deltas in the order they happened;
 * - per-key: a key is queued once however many changes it collects, and a
 *   key is never handed out twice at once;
 * - compressed: consecutive deltas of a key merge ({@link compressDeltas}),
 *   so a burst of updates to one object costs one handling;
 * - tombstones: a `replace` that lacks an object the consumer knows, or one
 *   still queued, queues a `Deleted` delta carrying a
 *   {@link DeletedFinalStateUnknown}.
 *
 * `hasSynced()` turns true once everything queued by the first `replace` has
 * been popped and processed.
 *
 * ```ts
 * const cache = new IndexedStore();
 * const fifo = new DeltaFIFO({ knownObjects: cache });
 * // a Reflector writes into fifo; the informer loop:
 * while (await fifo.pop((batch) => applyTo(cache, batch), signal)) {}
 * ```
 */
export class DeltaFIFO<T extends KubeObject = KubeObject> implements ReflectorStore<T> {
  /**
   * Each queued key's deltas; a key with one delta (every key of a first sync) holds it alone, so
   * that a snapshot waiting to be handled holds no array per object. {@link DeltaFIFO.take} hands
   * out an array either way.
   */
  private readonly items = new Map<string, Delta<T> | Delta<T>[]>();
  private queue: string[] = [];
  private head = 0;
  private populated = false;
  private initialPopulationCount = 0;
  private isClosed = false;
  private waiters: (() => void)[] = [];
  private readonly keyOf: (obj: T | DeletedFinalStateUnknown<T>) => string;
  private readonly knownObjects: KeyListerGetter<T> | undefined;
  private readonly replaceType: DeltaType;

  constructor(options: DeltaFIFOOptions<T> = {}) {
    const keyFunc = options.keyFunc;
    this.keyOf = keyFunc
      ? (obj) => (obj instanceof DeletedFinalStateUnknown ? obj.key : keyFunc(obj))
      : (obj) => metaNamespaceKey(obj);
    this.knownObjects = options.knownObjects;
    this.replaceType = options.emitDeltaTypeReplaced === false ? "Sync" : "Replaced";
  }

  /** How many keys are queued. */
  get length(): number {
    return this.queue.length - this.head;
  }

  /** Whether {@link DeltaFIFO.close} was called. */
  get closed(): boolean {
    return this.isClosed;
  }

  /** True once the first `replace` (or first write) happened and all it queued has been processed. */
  hasSynced(): boolean {
    return this.populated && this.initialPopulationCount === 0;
  }

  add(obj: T): void {
    this.populated = true;
    this.queueAction("Added", obj);
  }

  update(obj: T): void {
    this.populated = true;
    this.queueAction("Updated", obj);
  }

  /**
   * Queues a deletion, unless `knownObjects` was given and the object is
   * neither known to the consumer nor queued (then there is nothing to delete).
   */
  delete(obj: T | DeletedFinalStateUnknown<T>): void {
    const key = this.keyOf(obj);
    this.populated = true;
    if (this.knownObjects && !this.items.has(key) && this.knownObjects.getByKey(key) === undefined) return;
    this.queueActionForKey(key, "Deleted", obj);
  }

  replace(list: readonly T[], _resourceVersion: string): void {
    this.ensureOpen();
    const knownKeys = this.knownObjects?.listKeys() ?? [];
    // With nothing queued and nothing known (a first sync) nothing can be missing from the list,
    // so its keys are not collected.
    const keys = this.items.size > 0 || knownKeys.length > 0 ? new Set<string>() : undefined;
    for (const obj of list) {
      const key = this.keyOf(obj);
      keys?.add(key);
      this.queueActionForKey(key, this.replaceType, obj);
    }
    if (keys === undefined) {
      this.markPopulated();
      return;
    }
    // Queued objects missing from the new list: their last queued state is all we know.
    for (const [key, queued] of this.items) {
      if (keys.has(key)) continue;
      const newest = lastOf(queued).object;
      const last = newest instanceof DeletedFinalStateUnknown ? newest.obj : newest;
      this.queueActionForKey(key, "Deleted", new DeletedFinalStateUnknown(key, last));
    }
    for (const key of knownKeys) {
      if (keys.has(key) || this.items.has(key)) continue;
      const known = this.knownObjects?.getByKey(key);
      if (known === undefined) continue;
      this.queueActionForKey(key, "Deleted", new DeletedFinalStateUnknown(key, known));
    }
    this.markPopulated();
  }

  /** After the first `replace`: what it queued is the initial population, which `hasSynced` waits for. */
  private markPopulated(): void {
    if (!this.populated) {
      this.populated = true;
      this.initialPopulationCount = this.length;
    }
  }

  /**
   * Queues a `Sync` delta for every object the consumer knows that has no
   * delta queued (those with one will be handled anyway).
   */
  resync(): void {
    this.ensureOpen();
    if (!this.knownObjects) return;
    for (const key of this.knownObjects.listKeys()) {
      if (this.items.has(key)) continue;
      const obj = this.knownObjects.getByKey(key);
      if (obj !== undefined) this.queueActionForKey(key, "Sync", obj);
    }
  }

  /** Puts a popped batch back (for a consumer that could not handle it), unless its key was queued again meanwhile. */
  addIfNotPresent(batch: Pick<DeltaBatch<T>, "key" | "deltas">): void {
    this.ensureOpen();
    this.populated = true;
    if (this.items.has(batch.key) || batch.deltas.length === 0) return;
    this.items.set(batch.key, [...batch.deltas]);
    this.queue.push(batch.key);
    this.wake();
  }

  /** The deltas queued for `key` (a copy), or `undefined`. */
  getByKey(key: string): Delta<T>[] | undefined {
    const queued = this.items.get(key);
    return queued === undefined ? undefined : Array.isArray(queued) ? [...queued] : [queued];
  }

  /** The queued keys, oldest first. */
  listKeys(): string[] {
    return this.queue.slice(this.head);
  }

  /**
   * Hands the oldest key and its deltas to `process`, synchronously.
   * Returns false (and calls nothing) when the queue is empty or closed.
   */
  popSync(process: (batch: DeltaBatch<T>) => void): boolean {
    const batch = this.take();
    if (!batch) return false;
    try {
      process(batch);
    } finally {
      this.processed();
    }
    return true;
  }

  /**
   * Waits until a key is queued, hands it with its deltas to `process` and
   * waits for `process` to finish. Resolves true after processing, false when
   * the FIFO was closed or `signal` aborted (then nothing is taken).
   * If `process` throws, the batch is dropped (re-queue it with
   * {@link DeltaFIFO.addIfNotPresent}) and `pop` rejects.
   */
  async pop(process: (batch: DeltaBatch<T>) => void | Promise<void>, signal?: AbortSignal): Promise<boolean> {
    while (this.length === 0) {
      if (this.isClosed || signal?.aborted) return false;
      await this.waitForItems(signal);
    }
    if (this.isClosed || signal?.aborted) return false;
    const batch = this.take() as DeltaBatch<T>;
    try {
      await process(batch);
    } finally {
      this.processed();
    }
    return true;
  }

  /** Stops the FIFO: pending and future pops return false, writes throw. */
  close(): void {
    this.isClosed = true;
    this.wake();
  }

  private waitForItems(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        signal?.removeEventListener("abort", done);
        resolve();
      };
      this.waiters.push(done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  private wake(): void {
    if (this.waiters.length === 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  private take(): DeltaBatch<T> | undefined {
    if (this.isClosed || this.length === 0) return undefined;
    const key = this.queue[this.head] as string;
    this.head++;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    const queued = this.items.get(key) as Delta<T> | Delta<T>[];
    this.items.delete(key);
    return { key, deltas: Array.isArray(queued) ? queued : [queued], isInInitialList: !this.hasSynced() };
  }

  private processed(): void {
    if (this.initialPopulationCount > 0) this.initialPopulationCount--;
  }

  private queueAction(type: DeltaType, obj: T): void {
    this.queueActionForKey(this.keyOf(obj), type, obj);
  }

  private queueActionForKey(key: string, type: DeltaType, obj: T | DeletedFinalStateUnknown<T>): void {
    this.ensureOpen();
    const delta: Delta<T> = { type, object: obj };
    const queued = this.items.get(key);
    if (queued === undefined) {
      this.items.set(key, delta);
      this.queue.push(key);
      this.wake();
      return;
    }
    if (!Array.isArray(queued)) {
      this.items.set(key, compressDeltas(queued, delta) ?? [queued, delta]);
      return;
    }
    const merged = compressDeltas(queued[queued.length - 1] as Delta<T>, delta);
    if (merged) queued[queued.length - 1] = merged;
    else queued.push(delta);
  }

  private ensureOpen(): void {
    if (this.isClosed) throw new FifoClosedError("the DeltaFIFO is closed");
  }
}

/** The newest of a key's queued deltas. */
function lastOf<T>(queued: Delta<T> | Delta<T>[]): Delta<T> {
  return Array.isArray(queued) ? (queued[queued.length - 1] as Delta<T>) : queued;
}
