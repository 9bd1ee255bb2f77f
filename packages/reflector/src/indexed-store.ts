import { DeletedFinalStateUnknown } from "./deleted-final-state-unknown.js";
import type { KubeObject } from "@tessera/client";
import { metaNamespaceKey, type KeyFunc } from "./object-key.js";
import { IndexTable } from "./index-table.js";
import type { Indexer, Indexers, StagedReplace } from "./store.js";

/** Options of an {@link IndexedStore}. */
export interface IndexedStoreOptions<T> {
  /** How objects are keyed; default {@link metaNamespaceKey} (`namespace/name`). */
  keyFunc?: KeyFunc<T>;
  /** Named index functions to maintain from the start. */
  indexers?: Indexers<T>;
}

/** An {@link IndexedStore}'s staged replace ({@link IndexedStore.beginReplace}). */
export interface IndexedStoreReplace<T> extends StagedReplace<T> {
  /** How many objects are staged (a key added twice counts once). */
  readonly size: number;
  /** The staged objects by key, in the order their keys were first added (after `commit` too). */
  entries(): IterableIterator<[string, T]>;
}

/**
 * An in-memory {@link Indexer}: objects by key, plus named indices kept up to
 * date on every write. `replace` swaps the whole content at once.
 *
 * ```ts
 * const cache = new IndexedStore<V1Pod>({ indexers: { [NAMESPACE_INDEX]: indexByNamespace } });
 * cache.replace(pods, "123");
 * cache.byIndex(NAMESPACE_INDEX, "default");
 * ```
 */
export class IndexedStore<T extends KubeObject = KubeObject> implements Indexer<T> {
  private items = new Map<string, T>();
  private table = new IndexTable<T>();
  private readonly keyFunc: KeyFunc<T> | undefined;
  private readonly keyOf: (obj: T | DeletedFinalStateUnknown<T>) => string;

  constructor(options: IndexedStoreOptions<T> = {}) {
    const keyFunc = options.keyFunc;
    this.keyFunc = keyFunc;
    this.keyOf = keyFunc
      ? (obj) => (obj instanceof DeletedFinalStateUnknown ? obj.key : keyFunc(obj))
      : (obj) => metaNamespaceKey(obj);
    if (options.indexers) this.addIndexers(options.indexers);
  }

  get size(): number {
    return this.items.size;
  }

  add(obj: T): void {
    this.put(this.keyOf(obj), obj);
  }

  update(obj: T): void {
    this.put(this.keyOf(obj), obj);
  }

  /**
   * Stores `obj` under `key`, which must be what this store's key function
   * gives for it: `add` or `update` for a caller that has the key already (an
   * informer handling a `DeltaFIFO` batch), so it is not computed again.
   */
  setByKey(key: string, obj: T): void {
    this.put(key, obj);
  }

  delete(obj: T | DeletedFinalStateUnknown<T>): void {
    const key = this.keyOf(obj);
    const old = this.items.get(key);
    if (old === undefined) return;
    this.items.delete(key);
    if (this.table.size > 0) this.table.removeObject(key, old);
  }

  replace(items: readonly T[], _resourceVersion: string): void {
    const next = new Map<string, T>();
    for (const obj of items) next.set(this.keyOf(obj), obj);
    this.items = next;
    this.table.clear();
    if (this.table.size > 0) for (const [key, obj] of next) this.table.insertObject(key, obj);
  }

  /**
   * A `replace` filed object by object: each object added is keyed and
   * indexed at once into a new map and new indexes, which `commit` puts in
   * place of the old ones (readers see the old content until then; the
   * resourceVersion is not kept, as with `replace`); `abort` drops them.
   */
  beginReplace(): IndexedStoreReplace<T> {
    const next = new IndexedStore<T>({
      ...(this.keyFunc ? { keyFunc: this.keyFunc } : {}),
      indexers: this.table.indexers(),
    });
    let state: "open" | "committed" | "aborted" = "open";
    const ensure = (allowed: boolean): void => {
      if (!allowed) throw new Error(`this staged replace was ${state} already; begin another`);
    };
    return {
      add: (obj) => {
        ensure(state === "open");
        next.add(obj);
      },
      get size() {
        return next.size;
      },
      entries: () => {
        ensure(state !== "aborted");
        return next.items.entries();
      },
      commit: () => {
        ensure(state === "open");
        state = "committed";
        this.takeContentOf(next);
      },
      abort: () => {
        if (state !== "open") return;
        state = "aborted";
        next.items = new Map();
      },
    };
  }

  get(obj: T): T | undefined {
    return this.items.get(this.keyOf(obj));
  }

  getByKey(key: string): T | undefined {
    return this.items.get(key);
  }

  has(key: string): boolean {
    return this.items.has(key);
  }

  list(): T[] {
    return Array.from(this.items.values());
  }

  listKeys(): string[] {
    return Array.from(this.items.keys());
  }

  index(indexName: string, obj: T): T[] {
    return this.objectsFor(this.table.keysMatching(indexName, obj));
  }

  indexKeys(indexName: string, indexedValue: string): string[] {
    return Array.from(this.table.keysOf(indexName, indexedValue));
  }

  byIndex(indexName: string, indexedValue: string): T[] {
    return this.objectsFor(this.table.keysOf(indexName, indexedValue));
  }

  listIndexFuncValues(indexName: string): string[] {
    return this.table.valuesIndexed(indexName);
  }

  getIndexers(): Indexers<T> {
    return this.table.indexers();
  }

  addIndexers(indexers: Indexers<T>): void {
    const added = this.table.register(indexers);
    const first = this.table.size - added.length;
    added.forEach((fn, i) => {
      for (const [key, obj] of this.items) this.table.fileUnder(first + i, key, fn(obj));
    });
  }

  /** Puts `next`'s objects and indexes in place of this store's, at once. */
  private takeContentOf(next: IndexedStore<T>): void {
    // An index function added to this store since `next` was made: file every object anew.
    if (next.table.size !== this.table.size) {
      this.replace(next.list(), "");
      return;
    }
    this.items = next.items;
    this.table = next.table;
  }

  private objectsFor(keys: Iterable<string>): T[] {
    const out: T[] = [];
    for (const key of keys) {
      const obj = this.items.get(key);
      if (obj !== undefined) out.push(obj);
    }
    return out;
  }

  private put(key: string, obj: T): void {
    const old = this.items.get(key);
    this.items.set(key, obj);
    if (this.table.size === 0) return;
    if (old === undefined) this.table.insertObject(key, obj);
    else this.table.updateObject(key, old, obj);
  }
}
