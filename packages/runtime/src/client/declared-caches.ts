import type { Logger } from "@tessera/core";
import type { SharedIndexInformer } from "@tessera/informers";
import { describeResource, type KubeObject, type Resource } from "@tessera/client";
import type { IndexFunction } from "../builder/cache-options.js";

/** One informer a controller declared (`for`, `owns`, `watches`), and what it holds. */
export interface DeclaredCache {
  readonly informer: SharedIndexInformer<KubeObject>;
  /** The one namespace it caches; undefined: all (or a cluster-scoped kind). */
  readonly namespace: string | undefined;
  /** The controllers that declared it, for messages. */
  readonly controllers: readonly string[];
}

interface DeclaredIndex {
  /** As declared: compared to tell a second declaration of the name apart. */
  readonly fn: IndexFunction;
  /** What the caches run: `fn`, with a throw logged and the object filed under nothing. */
  readonly safe: IndexFunction;
  readonly controller: string;
}

/**
 * The caches the manager's controllers declared, by kind, and the indexes
 * declared on each kind: what the cached client reads, so that a read of a
 * kind nobody declared fails instead of quietly starting a cache of the
 * whole kind.
 *
 * Two declarations of one kind with the same options share one informer;
 * with different options (namespaces, selectors, metadata-only, transform)
 * each has its own, and reads see the objects of all of them. An index
 * belongs to the kind: every cache of the kind keeps it, so reading an
 * index never misses an object another cache of the kind holds.
 */
export class DeclaredCaches {
  private readonly caches = new Map<string, DeclaredCache[]>();
  private readonly indexes = new Map<string, Map<string, DeclaredIndex>>();

  /** @param logger where an index function that throws on an object is reported */
  constructor(private readonly logger: Logger) {}

  /** Records that `controller` reads `informer` (of `resource`, scoped to `namespace`); gives it the kind's indexes. */
  add(
    resource: Resource,
    informer: SharedIndexInformer<KubeObject>,
    namespace: string | undefined,
    controller: string,
  ): void {
    const key = kindKey(resource);
    const list = this.caches.get(key) ?? [];
    const at = list.findIndex((c) => c.informer === informer);
    if (at >= 0) {
      const known = list[at] as DeclaredCache;
      if (!known.controllers.includes(controller)) {
        list[at] = { ...known, controllers: [...known.controllers, controller] };
      }
    } else {
      list.push({ informer, namespace, controllers: [controller] });
      const indexes = this.indexes.get(key);
      if (indexes) addIndexers(informer, indexes);
    }
    this.caches.set(key, list);
  }

  /**
   * Declares `indexes` on `resource` for `controller`: every cache of the
   * kind (those held and those added later) keeps them. Throws when a name
   * is already declared with another function, naming both controllers.
   */
  addIndexes(resource: Resource, indexes: Readonly<Record<string, IndexFunction>>, controller: string): void {
    const key = kindKey(resource);
    const declared = this.indexes.get(key) ?? new Map<string, DeclaredIndex>();
    const added = new Map<string, DeclaredIndex>();
    for (const [name, fn] of Object.entries(indexes)) {
      const before = declared.get(name);
      if (before === undefined) {
        added.set(name, { fn, safe: this.guarded(resource, name, controller, fn), controller });
      } else if (before.fn !== fn) {
        throw new Error(
          `index "${name}" of ${describeResource(resource)} is declared by controllers "${before.controller}" and "${controller}" with different functions; an index belongs to the kind, so give one another name or share one function`,
        );
      }
    }
    for (const [name, index] of added) declared.set(name, index);
    this.indexes.set(key, declared);
    for (const cache of this.caches.get(key) ?? []) addIndexers(cache.informer, added);
  }

  /**
   * `fn` made safe for a cache: an index function that throws on one object
   * would otherwise fail the cache's update and stop the informer; the
   * object is logged by its key and left out of that index only.
   */
  private guarded(resource: Resource, name: string, controller: string, fn: IndexFunction): IndexFunction {
    return (object) => {
      try {
        return fn(object);
      } catch (error) {
        const meta = object.metadata;
        this.logger.error("index function failed: the object is left out of the index", {
          index: name,
          resource: describeResource(resource),
          controller,
          key: meta?.namespace ? `${meta.namespace}/${meta.name ?? ""}` : (meta?.name ?? ""),
          error: error instanceof Error ? error.message : String(error),
        });
        return [];
      }
    };
  }

  /** The caches of `resource`; empty when no controller declared it. */
  of(resource: Resource): readonly DeclaredCache[] {
    return this.caches.get(kindKey(resource)) ?? [];
  }

  /** Whether an index of that name is declared on `resource`. */
  hasIndex(resource: Resource, name: string): boolean {
    return this.indexes.get(kindKey(resource))?.has(name) ?? false;
  }
}

/** Group and plural: the version does not change which objects are cached. */
function kindKey(resource: Resource): string {
  return `${resource.plural}.${resource.group}`;
}

function addIndexers(
  informer: SharedIndexInformer<KubeObject>,
  indexes: ReadonlyMap<string, DeclaredIndex>,
): void {
  const existing = informer.getIndexers();
  const missing: Record<string, IndexFunction> = {};
  for (const [name, { safe }] of indexes) if (existing[name] !== safe) missing[name] = safe;
  if (Object.keys(missing).length > 0) informer.addIndexers(missing);
}
