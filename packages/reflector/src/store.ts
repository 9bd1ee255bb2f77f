import type { DeletedFinalStateUnknown } from "./deleted-final-state-unknown.js";

/**
 * What a {@link Reflector} writes what it learns into. {@link IndexedStore}
 * (a plain cache) and {@link DeltaFIFO} (the queue an informer drains)
 * implement it; so can anything else with the same guarantees.
 */
export interface ReflectorStore<T> {
  /** An object was created (or first seen). */
  add(obj: T): void;
  /** An object changed. */
  update(obj: T): void;
  /** An object was deleted; a tombstone when its final state is unknown. */
  delete(obj: T | DeletedFinalStateUnknown<T>): void;
  /**
   * The collection is exactly `items`, as of `resourceVersion`: everything
   * else is gone. Atomic: no reader sees a mix of the old and new contents.
   */
  replace(items: readonly T[], resourceVersion: string): void;
  /**
   * Optional: a replace built object by object while a watch-list snapshot
   * arrives, so that the per-object work (keying, filing, indexing) is done
   * as the objects come rather than all after the last one. Nothing of it
   * is visible (to readers, handlers or a sync signal) before
   * {@link StagedReplace.commit}, which has the effect of `replace` with the
   * objects added, in order. `undefined` when the store has no cheaper way
   * at the moment (e.g. it holds objects a replace must compare with): the
   * reflector then collects the list and calls `replace`.
   */
  beginReplace?(): StagedReplace<T> | undefined;
}

/**
 * A replace in the making ({@link ReflectorStore.beginReplace}). It ends with
 * exactly one `commit` or `abort`; after either it takes nothing more.
 */
export interface StagedReplace<T> {
  /** The next object of the new collection; a key added twice keeps its first place and its later object. */
  add(obj: T): void;
  /** Publishes the objects added as the whole collection at `resourceVersion`, as `replace` would. */
  commit(resourceVersion: string): void;
  /** Drops what was added, leaving the store as it was (the sync failed or stopped). */
  abort(): void;
}

/** Reading side of a keyed cache, as a {@link DeltaFIFO} needs it to find tombstones. */
export interface KeyListerGetter<T> {
  /** Every key held. */
  listKeys(): string[];
  /** The object under `key`, or `undefined`. */
  getByKey(key: string): T | undefined;
}

/** A keyed, read-write cache of objects. */
export interface Store<T> extends ReflectorStore<T>, KeyListerGetter<T> {
  /** The object stored under `obj`'s key, or `undefined`. */
  get(obj: T): T | undefined;
  has(key: string): boolean;
  /** Every object (a new array). */
  list(): T[];
  /** How many objects are held. */
  readonly size: number;
}

/** The values an object is indexed under, for one named index (e.g. its namespace, its owner's UID). */
// Declared as a method's type, which TypeScript checks bivariantly, so that an
// indexer of a client-node model (whose timestamps are typed Date) is still an
// indexer of KubeObject (whose timestamps are the strings the server sends).
export type IndexFunc<T> = { index(obj: T): readonly string[] }["index"];

/** Named index functions. */
export type Indexers<T> = Record<string, IndexFunc<T>>;

/** A {@link Store} with named secondary indices. */
export interface Indexer<T> extends Store<T> {
  /** The objects sharing any value of index `indexName` with `obj`. */
  index(indexName: string, obj: T): T[];
  /** The keys of the objects whose index `indexName` includes `indexedValue`. */
  indexKeys(indexName: string, indexedValue: string): string[];
  /** The objects whose index `indexName` includes `indexedValue`. */
  byIndex(indexName: string, indexedValue: string): T[];
  /** Every value index `indexName` holds. */
  listIndexFuncValues(indexName: string): string[];
  /** The index functions, by name. */
  getIndexers(): Indexers<T>;
  /** Adds index functions; objects already held are indexed at once. A name already in use throws. */
  addIndexers(indexers: Indexers<T>): void;
}

/** The conventional name of the namespace index. */
export const NAMESPACE_INDEX = "namespace";

/** Indexes an object by its namespace (`""` for cluster-scoped objects). */
export function indexByNamespace(obj: { metadata?: { namespace?: string } }): readonly string[] {
  return [obj.metadata?.namespace ?? ""];
}
