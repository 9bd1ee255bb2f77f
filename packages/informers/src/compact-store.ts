import type { KubeObject, OwnerReference } from "@tessera/client";
import { nodeBuiltin, type NodeBuiltins } from "@tessera/core";
import {
  DeletedFinalStateUnknown,
  IndexTable,
  metaNamespaceKey,
  type Indexer,
  type Indexers,
} from "@tessera/reflector";

/** How many decoded objects a compact cache keeps at most by default (see {@link CompactCacheOptions.hotObjects}). */
export const DEFAULT_HOT_OBJECTS = 256;

/**
 * Options of a compact cache ({@link CompactStore}): objects are kept as
 * their JSON text and decoded when read.
 */
export interface CompactCacheOptions {
  /**
   * How many decoded objects are kept, the most recently written or read:
   * a reconcile reads the object its event just cached without decoding it,
   * and an object read again while it stays among these is decoded once.
   * Default {@link DEFAULT_HOT_OBJECTS}; `0` decodes on every read.
   */
  hotObjects?: number;
  /**
   * How each object is kept: `"json"` (default), its JSON text; `"deflate"`,
   * that text compressed (raw deflate, as a one-byte string) against a
   * dictionary, the text of the first object the cache held: an object much
   * like the others then takes a few hundred bytes, for a compression on
   * every write and an inflation on every read that is not hot (each costs
   * more than the `JSON.parse`; see docs/benchmarks.md).
   */
  encoding?: "json" | "deflate";
}

/** Raw deflate's settings for objects of a few KiB: a small window and state, so each call allocates little. */
const DEFLATE = { level: 1, memLevel: 2, windowBits: 13 } as const;

/** What a compact cache extracts from an object once, when it is written. */
export interface CompactEntryMetadata {
  readonly resourceVersion: string | undefined;
  readonly labels: Readonly<Record<string, string>> | undefined;
  readonly ownerReferences: readonly OwnerReference[] | undefined;
}

/** The values of one index for one object: one value as itself, else an array (a few bytes less per object). */
type IndexValues = string | readonly string[];

/** One cached object: its text, and what is read without decoding it. */
interface Entry extends CompactEntryMetadata {
  readonly text: string;
  /**
   * The values of each index, in the order the indexes were added: with
   * one index, that index's {@link IndexValues} itself; with several, an
   * array of them; with none, `undefined`.
   */
  values: IndexValues | IndexValues[] | undefined;
}

const NO_VALUES: readonly string[] = [];
const NO_INDEX_VALUES: readonly (readonly string[])[] = [];

function packValues(values: readonly string[]): IndexValues {
  return values.length === 1 ? (values[0] as string) : values.length === 0 ? NO_VALUES : values;
}

function unpackValues(values: IndexValues): readonly string[] {
  return typeof values === "string" ? [values] : values;
}

/**
 * An {@link Indexer} that keeps each object as its JSON text (a V8 string,
 * one byte a character for ASCII; or that text deflated, option `encoding`)
 * rather than as an object graph, whose fields cost tens of bytes each.
 * Reads decode (`JSON.parse`); the
 * {@link CompactCacheOptions.hotObjects} last written or read stay decoded,
 * so an object read again while it is hot is the same object and is decoded
 * once. The key, resourceVersion, labels, owner references and every index's
 * values are taken from the object when it is written, so indexing, label
 * filtering ({@link CompactStore.listByLabels}) and the informer's "unchanged
 * since the relist" check decode nothing.
 *
 * Store semantics are those of `IndexedStore` (of @tessera/reflector) with
 * values compared by content: what a read returns is equal to what was
 * written, as JSON keeps it (no `undefined` members, no functions or
 * class instances, which objects from the API server never hold). An object
 * not hot is a fresh copy on every read; changing it changes nothing cached.
 *
 * ```ts
 * const cache = new CompactStore<V1Pod>({ indexers: { [NAMESPACE_INDEX]: indexByNamespace } });
 * cache.add(pod);
 * cache.byIndex(NAMESPACE_INDEX, "default"); // decoded as read
 * ```
 */
export class CompactStore<T extends KubeObject = KubeObject> implements Indexer<T> {
  private items = new Map<string, Entry>();
  private readonly table = new IndexTable<T>();
  /** The decoded objects kept, least recently used first (a Map iterates in insertion order). */
  private hot = new Map<string, T>();
  private readonly hotLimit: number;
  /** With `deflate`: node:zlib, loaded only then (an operator without it never loads it). */
  private readonly zlib: NodeBuiltins["node:zlib"] | undefined;
  /** With `deflate`: the text of the first object held, which every object is compressed against. */
  private dictionary: Buffer | undefined;

  constructor(options: CompactCacheOptions & { indexers?: Indexers<T> } = {}) {
    const limit = options.hotObjects ?? DEFAULT_HOT_OBJECTS;
    if (!Number.isSafeInteger(limit) || limit < 0) {
      throw new RangeError(`hotObjects must be a whole number of objects, 0 or more; got ${String(limit)}`);
    }
    const encoding = options.encoding ?? "json";
    if (encoding !== "json" && encoding !== "deflate") {
      throw new RangeError(`encoding must be "json" or "deflate"; got ${JSON.stringify(encoding)}`);
    }
    this.hotLimit = limit;
    this.zlib = encoding === "deflate" ? nodeBuiltin("node:zlib") : undefined;
    if (options.indexers) this.addIndexers(options.indexers);
  }

  get size(): number {
    return this.items.size;
  }

  add(obj: T): void {
    this.put(metaNamespaceKey(obj), obj);
  }

  update(obj: T): void {
    this.put(metaNamespaceKey(obj), obj);
  }

  /**
   * Stores `obj` under `key`, which must be its {@link metaNamespaceKey}:
   * `add` or `update` for a caller that has the key already (an informer
   * handling a `DeltaFIFO` batch), so it is not computed again.
   */
  setByKey(key: string, obj: T): void {
    this.put(key, obj);
  }

  delete(obj: T | DeletedFinalStateUnknown<T>): void {
    const key = obj instanceof DeletedFinalStateUnknown ? obj.key : metaNamespaceKey(obj);
    const old = this.items.get(key);
    if (old === undefined) return;
    this.items.delete(key);
    this.hot.delete(key);
    if (this.table.size > 0) this.table.remove(key, this.allValuesOf(old));
  }

  replace(items: readonly T[], _resourceVersion: string): void {
    const next = new Map<string, Entry>();
    const hot = new Map<string, T>();
    this.items = next;
    this.hot = hot;
    this.table.clear();
    for (const obj of items) this.put(metaNamespaceKey(obj), obj);
  }

  get(obj: T): T | undefined {
    return this.getByKey(metaNamespaceKey(obj));
  }

  getByKey(key: string): T | undefined {
    const entry = this.items.get(key);
    return entry === undefined ? undefined : this.decoded(key, entry);
  }

  has(key: string): boolean {
    return this.items.has(key);
  }

  list(): T[] {
    const out: T[] = [];
    for (const [key, entry] of this.items) out.push(this.decoded(key, entry));
    return out;
  }

  listKeys(): string[] {
    return Array.from(this.items.keys());
  }

  /** What was extracted from the object under `key` when it was written, without decoding it; `undefined` if none. */
  metadataOf(key: string): CompactEntryMetadata | undefined {
    return this.items.get(key);
  }

  /** The objects whose labels `matches` accepts (of those under `keys`, or all), decoding only those. */
  listByLabels(matches: (labels: Readonly<Record<string, string>>) => boolean, keys?: Iterable<string>): T[] {
    const out: T[] = [];
    const consider = (key: string, entry: Entry | undefined): void => {
      if (entry !== undefined && matches(entry.labels ?? {})) out.push(this.decoded(key, entry));
    };
    if (keys === undefined) for (const [key, entry] of this.items) consider(key, entry);
    else for (const key of keys) consider(key, this.items.get(key));
    return out;
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
    added.forEach((fn, i) => {
      // The objects held are decoded once more, to file them under the new index.
      const count = this.table.size - added.length + i + 1;
      for (const [key, entry] of this.items) {
        const values = fn(this.decoded(key, entry));
        const packed = packValues(values);
        if (count === 1) entry.values = packed;
        else if (count === 2) entry.values = [entry.values as IndexValues, packed];
        else (entry.values as IndexValues[]).push(packed);
        this.table.fileUnder(count - 1, key, values);
      }
    });
  }

  private objectsFor(keys: Iterable<string>): T[] {
    const out: T[] = [];
    for (const key of keys) {
      const entry = this.items.get(key);
      if (entry !== undefined) out.push(this.decoded(key, entry));
    }
    return out;
  }

  /** The object of `entry`: the hot one, or decoded now and made hot. */
  private decoded(key: string, entry: Entry): T {
    const hot = this.hot.get(key);
    if (hot !== undefined) {
      // Most recently used last.
      this.hot.delete(key);
      this.hot.set(key, hot);
      return hot;
    }
    const obj = JSON.parse(this.zlib ? this.inflate(entry.text, this.zlib) : entry.text) as T;
    this.keepHot(key, obj);
    return obj;
  }

  private encode(obj: T): string {
    const text = JSON.stringify(obj);
    if (!this.zlib) return text;
    const bytes = Buffer.from(text, "utf8");
    this.dictionary ??= bytes;
    // latin1 keeps each byte as one character of a one-byte string: no Buffer (and its backing store) per object.
    return this.zlib.deflateRawSync(bytes, { ...DEFLATE, dictionary: this.dictionary }).toString("latin1");
  }

  private inflate(text: string, zlib: NodeBuiltins["node:zlib"]): string {
    const bytes = Buffer.from(text, "latin1");
    return zlib
      .inflateRawSync(bytes, { windowBits: DEFLATE.windowBits, dictionary: this.dictionary })
      .toString("utf8");
  }

  private keepHot(key: string, obj: T): void {
    if (this.hotLimit === 0) return;
    this.hot.delete(key);
    this.hot.set(key, obj);
    if (this.hot.size > this.hotLimit) this.hot.delete(this.hot.keys().next().value as string);
  }

  private put(key: string, obj: T): void {
    const old = this.items.get(key);
    const values = this.table.size === 0 ? NO_INDEX_VALUES : this.table.valuesOf(obj);
    const count = values.length;
    const meta = obj.metadata;
    const refs: unknown = meta?.ownerReferences;
    const labels: unknown = meta?.labels;
    const entry: Entry = {
      text: this.encode(obj),
      resourceVersion: meta?.resourceVersion,
      labels: labels !== null && typeof labels === "object" ? (labels as Record<string, string>) : undefined,
      ownerReferences: Array.isArray(refs) ? (refs as OwnerReference[]) : undefined,
      values:
        count === 0
          ? undefined
          : count === 1
            ? packValues(values[0] as readonly string[])
            : values.map(packValues),
    };
    this.items.set(key, entry);
    // The object written is the one handlers are handed now: the likeliest to be read next.
    this.keepHot(key, obj);
    if (count === 0) return;
    if (old === undefined) this.table.insert(key, values);
    else this.table.update(key, this.allValuesOf(old), values);
  }

  /** The values of every index of `entry`, in order. */
  private allValuesOf(entry: Entry): readonly (readonly string[])[] {
    const values = entry.values;
    if (values === undefined) return NO_INDEX_VALUES;
    if (this.table.size === 1) return [unpackValues(values as IndexValues)];
    return (values as IndexValues[]).map(unpackValues);
  }
}
