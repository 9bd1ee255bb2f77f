import { NAMESPACE_INDEX, type Indexer } from "@tessera/reflector";
import { type KubeObject } from "@tessera/client";
import { labelMatcher } from "@tessera/client";
import { CompactStore } from "./compact-store.js";
import { matcherFor, type LabelMatch } from "./label-match.js";

/**
 * Reads an informer's cache: by key, by namespace, by any index. Objects
 * returned are the cached ones themselves, shared with every other reader:
 * treat them as read-only (copy before changing). From a compact cache
 * (the informer's `compact` option) they are decoded as read, except the
 * most recent ones, which are shared the same way; a label selector is
 * then matched before decoding, so only the objects selected are decoded.
 *
 * ```ts
 * const pods = informer.lister;
 * pods.get("web-0", "default");
 * pods.namespace("default").list({ app: "web" });
 * pods.byIndex("node", "worker-1");
 * ```
 */
export class Lister<T extends KubeObject> {
  constructor(private readonly indexer: Indexer<T>) {}

  /** The object named `name` (in `namespace` for namespaced resources), or `undefined`. */
  get(name: string, namespace?: string): T | undefined {
    return this.indexer.getByKey(namespace ? `${namespace}/${name}` : name);
  }

  /** The object stored under `key` (`namespace/name`, or `name`), or `undefined`. */
  getByKey(key: string): T | undefined {
    return this.indexer.getByKey(key);
  }

  /** Every cached object that `match` accepts (all of them without it). */
  list(match?: LabelMatch<T>): T[] {
    return byLabels(this.indexer, undefined, match) ?? filter(this.indexer.list(), match);
  }

  /** The objects whose index `indexName` includes `value`, filtered by `match`. Unknown index names throw. */
  byIndex(indexName: string, value: string, match?: LabelMatch<T>): T[] {
    return (
      byLabels(this.indexer, () => this.indexer.indexKeys(indexName, value), match) ??
      filter(this.indexer.byIndex(indexName, value), match)
    );
  }

  /** The keys of the objects whose index `indexName` includes `value`. */
  indexKeys(indexName: string, value: string): string[] {
    return this.indexer.indexKeys(indexName, value);
  }

  /** A lister for one namespace (`""`: cluster-scoped objects). */
  namespace(namespace: string): NamespaceLister<T> {
    return new NamespaceLister(this.indexer, namespace);
  }

  /** How many objects are cached. */
  get size(): number {
    return this.indexer.size;
  }
}

/** A {@link Lister} confined to one namespace. */
export class NamespaceLister<T extends KubeObject> {
  constructor(
    private readonly indexer: Indexer<T>,
    /** The namespace read. */
    readonly namespace: string,
  ) {}

  /** The object `name` in this namespace, or `undefined`. */
  get(name: string): T | undefined {
    return this.indexer.getByKey(this.namespace ? `${this.namespace}/${name}` : name);
  }

  /** The objects of this namespace that `match` accepts; through the namespace index when there is one. */
  list(match?: LabelMatch<T>): T[] {
    if (NAMESPACE_INDEX in this.indexer.getIndexers()) {
      return (
        byLabels(this.indexer, () => this.indexer.indexKeys(NAMESPACE_INDEX, this.namespace), match) ??
        filter(this.indexer.byIndex(NAMESPACE_INDEX, this.namespace), match)
      );
    }
    const items = this.indexer.list().filter((o) => (o.metadata?.namespace ?? "") === this.namespace);
    return filter(items, match);
  }
}

function filter<T extends KubeObject>(items: T[], match: LabelMatch<T> | undefined): T[] {
  const accept = matcherFor(match);
  return accept ? items.filter(accept) : items;
}

/**
 * A label selector read from a compact cache: the labels were kept when the
 * objects were written, so only the objects selected are decoded. `undefined`
 * when `match` is no selector or the cache is not compact.
 */
function byLabels<T extends KubeObject>(
  indexer: Indexer<T>,
  keys: (() => Iterable<string>) | undefined,
  match: LabelMatch<T> | undefined,
): T[] | undefined {
  if (match === undefined || typeof match === "function" || !(indexer instanceof CompactStore))
    return undefined;
  return (indexer as CompactStore<T>).listByLabels(labelMatcher(match), keys?.());
}
