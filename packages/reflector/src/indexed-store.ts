import { DeletedFinalStateUnknown } from "./deleted-final-state-unknown.js";
import type { KubeObject } from "@tessera/client";
import { metaNamespaceKey, type KeyFunc } from "./object-key.js";
import type { IndexFunc, Indexer, Indexers } from "./store.js";

/** Options of an {@link IndexedStore}. */
export interface IndexedStoreOptions<T> {
  /** How objects are keyed; default {@link metaNamespaceKey} (`namespace/name`). */
  keyFunc?: KeyFunc<T>;
  /** Named index functions to maintain from the start. */
  indexers?: Indexers<T>;
}

/** Raised for an index name that is not registered, or registered twice. */
export class IndexerError extends Error {
  override name = "IndexerError";
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
  private readonly indexers = new Map<string, IndexFunc<T>>();
  /** index name -> indexed value -> keys */
  private indices = new Map<string, Map<string, Set<string>>>();
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

  delete(obj: T | DeletedFinalStateUnknown<T>): void {
    const key = this.keyOf(obj);
    const old = this.items.get(key);
    if (old === undefined) return;
    this.items.delete(key);
    if (this.indexers.size > 0) this.unindex(key, old);
  }

  replace(items: readonly T[], _resourceVersion: string): void {
    const next = new Map<string, T>();
    for (const obj of items) next.set(this.keyOf(obj), obj);
    this.items = next;
    const indices = new Map<string, Map<string, Set<string>>>();
    for (const name of this.indexers.keys()) indices.set(name, new Map());
    this.indices = indices;
    if (this.indexers.size > 0) for (const [key, obj] of next) this.indexNew(key, obj);
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
    const fn = this.indexFunc(indexName);
    const index = this.indices.get(indexName) as Map<string, Set<string>>;
    const keys = new Set<string>();
    for (const value of fn(obj)) for (const key of index.get(value) ?? []) keys.add(key);
    return this.objectsFor(keys);
  }

  indexKeys(indexName: string, indexedValue: string): string[] {
    this.indexFunc(indexName);
    return Array.from(this.indices.get(indexName)?.get(indexedValue) ?? []);
  }

  byIndex(indexName: string, indexedValue: string): T[] {
    this.indexFunc(indexName);
    return this.objectsFor(this.indices.get(indexName)?.get(indexedValue) ?? []);
  }

  listIndexFuncValues(indexName: string): string[] {
    this.indexFunc(indexName);
    return Array.from(this.indices.get(indexName)?.keys() ?? []);
  }

  getIndexers(): Indexers<T> {
    return Object.fromEntries(this.indexers);
  }

  addIndexers(indexers: Indexers<T>): void {
    const added = Object.entries(indexers);
    for (const [name] of added) {
      if (this.indexers.has(name)) throw new IndexerError(`index "${name}" is already registered`);
    }
    for (const [name, fn] of added) {
      this.indexers.set(name, fn);
      const index = new Map<string, Set<string>>();
      this.indices.set(name, index);
      for (const [key, obj] of this.items) for (const value of fn(obj)) addTo(index, value, key);
    }
  }

  private indexFunc(indexName: string): IndexFunc<T> {
    const fn = this.indexers.get(indexName);
    if (!fn) throw new IndexerError(`index "${indexName}" does not exist`);
    return fn;
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
    if (this.indexers.size === 0) return;
    if (old === undefined) {
      this.indexNew(key, obj);
      return;
    }
    for (const [name, fn] of this.indexers) {
      const index = this.indices.get(name) as Map<string, Set<string>>;
      const before = fn(old);
      const after = fn(obj);
      if (sameValues(before, after)) continue;
      for (const value of before) removeFrom(index, value, key);
      for (const value of after) addTo(index, value, key);
    }
  }

  private indexNew(key: string, obj: T): void {
    for (const [name, fn] of this.indexers) {
      const index = this.indices.get(name) as Map<string, Set<string>>;
      for (const value of fn(obj)) addTo(index, value, key);
    }
  }

  private unindex(key: string, old: T): void {
    for (const [name, fn] of this.indexers) {
      const index = this.indices.get(name) as Map<string, Set<string>>;
      for (const value of fn(old)) removeFrom(index, value, key);
    }
  }
}

function addTo(index: Map<string, Set<string>>, value: string, key: string): void {
  let keys = index.get(value);
  if (!keys) {
    keys = new Set();
    index.set(value, keys);
  }
  keys.add(key);
}

function removeFrom(index: Map<string, Set<string>>, value: string, key: string): void {
  const keys = index.get(value);
  if (!keys) return;
  keys.delete(key);
  if (keys.size === 0) index.delete(value);
}

function sameValues(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
