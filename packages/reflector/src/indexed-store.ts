import { DeletedFinalStateUnknown } from "./deleted-final-state-unknown.js";
import type { KubeObject } from "@tessera/client";
import { metaNamespaceKey, type KeyFunc } from "./object-key.js";
import { IndexTable } from "./index-table.js";
import type { Indexer, Indexers } from "./store.js";

/** Options of an {@link IndexedStore}. */
export interface IndexedStoreOptions<T> {
  /** How objects are keyed; default {@link metaNamespaceKey} (`namespace/name`). */
  keyFunc?: KeyFunc<T>;
  /** Named index functions to maintain from the start. */
  indexers?: Indexers<T>;
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
  private readonly table = new IndexTable<T>();
  private readonly keyOf: (obj: T | DeletedFinalStateUnknown<T>) => string;

  constructor(options: IndexedStoreOptions<T> = {}) {
    const keyFunc = options.keyFunc;
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
