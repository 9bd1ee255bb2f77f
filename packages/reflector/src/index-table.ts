import { IndexerError } from "./indexer-error.js";
import type { IndexFunc, Indexers } from "./store.js";

/** indexed value -> keys of the objects filed under it */
type Index = Map<string, Set<string>>;

/**
 * The named indexes of a cache, without the objects: each index function,
 * and for each index the keys filed under each value it gave. Both
 * `IndexedStore` and the informers' compact store keep their objects their
 * own way and their indexes in one of these, so the index queries of the
 * {@link Indexer} contract (unknown names refused, values and keys listed)
 * are answered the same way by both.
 *
 * Indexes are numbered in the order they were registered; an object's
 * values are passed as one list per index, in that order.
 */
export class IndexTable<T> {
  private readonly funcs = new Map<string, IndexFunc<T>>();
  private indices = new Map<string, Index>();
  /** The functions and their indexes in registration order, for the per-object paths (no Map iteration). */
  private readonly funcList: IndexFunc<T>[] = [];
  private indexList: Index[] = [];

  /** How many indexes are registered. */
  get size(): number {
    return this.funcs.size;
  }

  /** The index functions, by name. */
  indexers(): Indexers<T> {
    return Object.fromEntries(this.funcs);
  }

  /**
   * Registers `indexers`, each with an empty index, and returns their
   * functions in order (the caller files the objects it holds under them
   * with {@link IndexTable.fileUnder}). Refuses, registering none, when a
   * name is taken.
   */
  register(indexers: Indexers<T>): IndexFunc<T>[] {
    const added = Object.entries(indexers);
    for (const [name] of added) {
      if (this.funcs.has(name)) throw new IndexerError(`index "${name}" is already registered`);
    }
    for (const [name, fn] of added) {
      const index: Index = new Map();
      this.funcs.set(name, fn);
      this.indices.set(name, index);
      this.funcList.push(fn);
      this.indexList.push(index);
    }
    return added.map(([, fn]) => fn);
  }

  /** Empties every index, keeping the functions: before a cache's content is replaced. */
  clear(): void {
    const indices = new Map<string, Index>();
    const list: Index[] = [];
    for (const name of this.funcs.keys()) {
      const index: Index = new Map();
      indices.set(name, index);
      list.push(index);
    }
    this.indices = indices;
    this.indexList = list;
  }

  /** The values of every index for `obj`, in order. */
  valuesOf(obj: T): (readonly string[])[] {
    const funcs = this.funcList;
    const values: (readonly string[])[] = [];
    for (let i = 0; i < funcs.length; i++) values.push((funcs[i] as IndexFunc<T>)(obj));
    return values;
  }

  /** Files `key` under `values` in the index numbered `position`. */
  fileUnder(position: number, key: string, values: readonly string[]): void {
    const index = this.indexAt(position);
    for (const value of values) addTo(index, value, key);
  }

  /** Files a new object's `key` under its values of every index. */
  insert(key: string, values: readonly (readonly string[])[]): void {
    const indexes = this.indexList;
    for (let i = 0; i < indexes.length; i++) {
      const index = indexes[i] as Index;
      for (const value of values[i] ?? []) addTo(index, value, key);
    }
  }

  /**
   * Files a new object's `key` under what each index function gives for
   * `obj`: `insert` for a cache that holds its objects, without a list of
   * lists per object (the store's hot path during a sync).
   */
  insertObject(key: string, obj: T): void {
    const funcs = this.funcList;
    const indexes = this.indexList;
    for (let i = 0; i < funcs.length; i++) {
      const index = indexes[i] as Index;
      for (const value of (funcs[i] as IndexFunc<T>)(obj)) addTo(index, value, key);
    }
  }

  /** `update` for a cache that holds its objects: the values of `old` and `obj` computed one index at a time. */
  updateObject(key: string, old: T, obj: T): void {
    const funcs = this.funcList;
    const indexes = this.indexList;
    for (let i = 0; i < funcs.length; i++) {
      const fn = funcs[i] as IndexFunc<T>;
      const index = indexes[i] as Index;
      const before = fn(old);
      const after = fn(obj);
      if (sameValues(before, after)) continue;
      for (const value of before) removeFrom(index, value, key);
      for (const value of after) addTo(index, value, key);
    }
  }

  /** `remove` for a cache that holds its objects. */
  removeObject(key: string, old: T): void {
    const funcs = this.funcList;
    const indexes = this.indexList;
    for (let i = 0; i < funcs.length; i++) {
      const index = indexes[i] as Index;
      for (const value of (funcs[i] as IndexFunc<T>)(old)) removeFrom(index, value, key);
    }
  }

  /** Moves `key` from its old values to its new ones, touching only the indexes whose values changed. */
  update(key: string, before: readonly (readonly string[])[], after: readonly (readonly string[])[]): void {
    const indexes = this.indexList;
    for (let i = 0; i < indexes.length; i++) {
      const index = indexes[i] as Index;
      const old = before[i] ?? [];
      const now = after[i] ?? [];
      if (sameValues(old, now)) continue;
      for (const value of old) removeFrom(index, value, key);
      for (const value of now) addTo(index, value, key);
    }
  }

  /** Takes `key` out of every index, given the values it was filed under. */
  remove(key: string, values: readonly (readonly string[])[]): void {
    const indexes = this.indexList;
    for (let i = 0; i < indexes.length; i++) {
      const index = indexes[i] as Index;
      for (const value of values[i] ?? []) removeFrom(index, value, key);
    }
  }

  /** The keys filed under any value that `indexName` gives for `obj`. */
  keysMatching(indexName: string, obj: T): Set<string> {
    const fn = this.func(indexName);
    const index = this.indices.get(indexName) as Index;
    const keys = new Set<string>();
    for (const value of fn(obj)) for (const key of index.get(value) ?? []) keys.add(key);
    return keys;
  }

  /** The keys filed under `indexedValue` in `indexName` (a live view: copy it before changing the cache). */
  keysOf(indexName: string, indexedValue: string): ReadonlySet<string> {
    this.func(indexName);
    return this.indices.get(indexName)?.get(indexedValue) ?? NO_KEYS;
  }

  /** The values `indexName` holds keys under. */
  valuesIndexed(indexName: string): string[] {
    this.func(indexName);
    return Array.from(this.indices.get(indexName)?.keys() ?? []);
  }

  /** The function of `indexName`; an {@link IndexerError} if none is registered. */
  func(indexName: string): IndexFunc<T> {
    const fn = this.funcs.get(indexName);
    if (!fn) throw new IndexerError(`index "${indexName}" does not exist`);
    return fn;
  }

  private indexAt(position: number): Index {
    const index = this.indexList[position];
    if (index !== undefined) return index;
    throw new RangeError(`no index at position ${position}: ${this.indices.size} registered`);
  }
}

const NO_KEYS: ReadonlySet<string> = new Set();

function addTo(index: Index, value: string, key: string): void {
  let keys = index.get(value);
  if (!keys) {
    keys = new Set();
    index.set(value, keys);
  }
  keys.add(key);
}

function removeFrom(index: Index, value: string, key: string): void {
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
