import type { SharedIndexInformer, SharedInformerFactory } from "@tessera/informers";
import {
  describeResource,
  type ApiErrorContext,
  type KubeObject,
  type Resource,
  ApiError,
  labelMatcher,
} from "@tessera/client";
import type { IndexFunction } from "../builder/cache-options.js";
import { indexNotDeclared } from "./index-not-declared.js";
import type { DeclaredCache, DeclaredCaches } from "./declared-caches.js";
import { objectKey, type ReadYourWrites } from "./read-your-writes.js";
import type {
  ApplyConfiguration,
  ApplyOptions,
  Client,
  DeleteOptions,
  ListOptions,
  ObjectRef,
  Patch,
  WriteOptions,
} from "@tessera/client";

/** Options of a {@link CachedClient}. */
export interface CachedClientOptions {
  /**
   * The caches the manager's controllers declared: reads are served from
   * them, and a read of a kind none declared fails with an error naming the
   * fix. Absent (a client made by hand): every kind is read from the
   * factory's cache of the whole kind, started on its first read.
   */
  caches?: DeclaredCaches;
  /**
   * With `caches`: a read of a kind no controller declared starts a cache
   * of the whole kind (every namespace, every object) and waits for it to
   * sync, instead of failing (the manager's `cache.lazy`). Default false.
   */
  lazy?: boolean;
  /**
   * With `caches`: after a write through this client, a cached read of the
   * object waits (boundedly) until the cache has delivered the written
   * resourceVersion (the manager's `cache.readYourWritesMs`). Absent: reads
   * never wait for writes.
   */
  readYourWrites?: ReadYourWrites;
}

/**
 * controller-runtime's split client: `get` and `list` read the informer
 * caches of the manager, writes go to the API server through the writer
 * (an `ApiClient`).
 *
 * In a manager, reads are served by the caches the controllers declared
 * (`for`, `owns`, `watches` and their cache options): a kind none declared
 * fails at once (declare it, or read it with `Tokens.ApiReader`), unless
 * `cache.lazy` starts a cache of the whole kind on its first read. A read
 * waits for the caches it uses to sync. `list` by `fields` reads the index
 * named for each field (declared with `indexes`), never scans the cache;
 * `metadata.name` and `metadata.namespace` need no index.
 *
 * With `readYourWrites` (the manager's `cache.readYourWritesMs`), a read
 * of an object this client wrote waits, for a bounded time after the write,
 * until the cache has seen the written resourceVersion.
 *
 * Reads return the cached objects themselves, not copies: copying every
 * object of every list costs more than the reconcile, and a reconciler that
 * needs to change an object builds an apply configuration or a patch
 * anyway. Do not mutate what a read returns: it would change the cache of
 * every controller (clone with `structuredClone` first).
 */
export class CachedClient implements Client {
  readonly reads = "cache";
  private readonly caches: DeclaredCaches | undefined;
  private readonly lazy: boolean;
  private readonly consistency: ReadYourWrites | undefined;

  constructor(
    private readonly factory: SharedInformerFactory,
    private readonly writer: Client,
    options: CachedClientOptions = {},
  ) {
    this.caches = options.caches;
    this.lazy = options.lazy ?? false;
    this.consistency = options.caches ? options.readYourWrites : undefined;
  }

  async get<T extends KubeObject>(
    resource: Resource<T>,
    ref: ObjectRef,
    options: { signal?: AbortSignal } = {},
  ): Promise<T | undefined> {
    const context = {
      verb: "get",
      resource: describeResource(resource),
      namespace: ref.namespace,
      name: ref.name,
    };
    const informers = await this.synced(resource, context, options.signal);
    const key = objectKey(resource, ref.namespace, ref.name);
    await this.consistency?.settled(resource, informers, [key], undefined, options.signal);
    for (const informer of informers) {
      const found = informer.lister.getByKey(key);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  async list<T extends KubeObject>(resource: Resource<T>, options: ListOptions = {}): Promise<T[]> {
    const context = { verb: "list", resource: describeResource(resource), namespace: options.namespace };
    // Parsed before the wait for the cache: a selector the server would refuse fails at once.
    const matchesLabels = options.labels === undefined ? undefined : labelMatcher(options.labels);
    const fields = Object.entries(options.fields ?? {});
    // metadata.namespace is the cache's own namespace index; metadata.name is a cheap check of each object.
    const fieldNamespace = fields.find(([path]) => path === "metadata.namespace")?.[1];
    if (
      fieldNamespace !== undefined &&
      options.namespace !== undefined &&
      fieldNamespace !== options.namespace
    ) {
      return [];
    }
    const namespace = resource.scope === "Namespaced" ? (options.namespace ?? fieldNamespace) : undefined;
    const informers = await this.synced(resource, { ...context, namespace }, options.signal);
    await this.consistency?.settled(resource, informers, undefined, namespace, options.signal);
    const indexed = fields.filter(([path]) => path !== "metadata.namespace" && path !== "metadata.name");
    const name = fields.find(([path]) => path === "metadata.name")?.[1];
    const lookups = [
      ...(options.index ? [[options.index.name, options.index.value] as const] : []),
      ...indexed,
    ];
    for (const [index, _] of lookups) this.requireIndex(resource, informers, index, context);
    const seen = informers.length > 1 ? new Set<string>() : undefined;
    const items: T[] = [];
    for (const informer of informers) {
      const [first, ...rest] = lookups;
      let candidates: T[];
      // The label selector goes to the lister too: a compact cache then decodes only what it selects.
      if (first !== undefined) {
        candidates = informer.lister.byIndex(first[0], first[1], options.labels);
        if (namespace !== undefined)
          candidates = candidates.filter((o) => o.metadata?.namespace === namespace);
      } else if (name !== undefined && namespace !== undefined) {
        const one = informer.lister.namespace(namespace).get(name);
        candidates = one === undefined ? [] : [one];
      } else {
        candidates =
          namespace !== undefined
            ? informer.lister.namespace(namespace).list(options.labels)
            : informer.lister.list(options.labels);
      }
      const indexers = rest.length > 0 ? informer.getIndexers() : {};
      for (const object of candidates) {
        if (name !== undefined && object.metadata?.name !== name) continue;
        if (!rest.every(([index, value]) => (indexers[index] as IndexFunction<T>)(object).includes(value)))
          continue;
        if (matchesLabels && !matchesLabels(object.metadata?.labels ?? {})) continue;
        if (seen) {
          const key = `${object.metadata?.namespace ?? ""}/${object.metadata?.name ?? ""}`;
          if (seen.has(key)) continue;
          seen.add(key);
        }
        items.push(object);
      }
    }
    return items;
  }

  create<T extends KubeObject>(resource: Resource<T>, object: T, options?: WriteOptions): Promise<T> {
    return this.wrote(resource, this.writer.create(resource, object, options));
  }

  update<T extends KubeObject>(resource: Resource<T>, object: T, options?: WriteOptions): Promise<T> {
    return this.wrote(resource, this.writer.update(resource, object, options));
  }

  patch<T extends KubeObject>(
    resource: Resource<T>,
    ref: ObjectRef,
    patch: Patch,
    options?: WriteOptions,
  ): Promise<T> {
    return this.wrote(resource, this.writer.patch(resource, ref, patch, options));
  }

  apply<T extends KubeObject>(
    resource: Resource<T>,
    object: ApplyConfiguration<T>,
    options?: ApplyOptions,
  ): Promise<T> {
    return this.wrote(resource, this.writer.apply(resource, object, options));
  }

  delete<T extends KubeObject>(
    resource: Resource<T>,
    ref: ObjectRef,
    options?: DeleteOptions,
  ): Promise<boolean> {
    return this.writer.delete(resource, ref, options);
  }

  updateStatus<T extends KubeObject>(resource: Resource<T>, object: T, options?: WriteOptions): Promise<T> {
    return this.wrote(resource, this.writer.updateStatus(resource, object, options));
  }

  applyStatus<T extends KubeObject>(
    resource: Resource<T>,
    object: ApplyConfiguration<T>,
    options?: ApplyOptions,
  ): Promise<T> {
    return this.wrote(resource, this.writer.applyStatus(resource, object, options));
  }

  /** Records a write's returned object for read-your-writes, when it is on and a declared cache holds the kind. */
  private async wrote<T extends KubeObject>(resource: Resource<T>, write: Promise<T>): Promise<T> {
    const written = await write;
    if (this.consistency) {
      const namespace = resource.scope === "Namespaced" ? written.metadata?.namespace : undefined;
      const informers = (this.caches?.of(resource) ?? [])
        .filter((c) => namespace === undefined || c.namespace === undefined || c.namespace === namespace)
        .map((c) => c.informer);
      this.consistency.wrote(resource, written, informers);
    }
    return written;
  }

  /**
   * The caches a read of `resource` in `context.namespace` uses, synced:
   * the declared ones that hold that namespace, else (a hand-made client, or
   * `lazy`) the factory's cache of the whole kind.
   */
  private async synced<T extends KubeObject>(
    resource: Resource<T>,
    context: ApiErrorContext,
    signal: AbortSignal | undefined,
  ): Promise<SharedIndexInformer<T>[]> {
    const informers = this.informersFor(resource, context);
    for (const informer of informers) {
      if (!informer.hasSynced() && !(await informer.waitForSync(signal))) {
        signal?.throwIfAborted();
        throw new ApiError(
          context,
          0,
          "CacheNotSynced",
          "the cache stopped before it synced (the manager is shutting down)",
        );
      }
    }
    return informers;
  }

  private informersFor<T extends KubeObject>(
    resource: Resource<T>,
    context: ApiErrorContext,
  ): SharedIndexInformer<T>[] {
    const declared = this.caches?.of(resource) ?? [];
    if (declared.length === 0) {
      if (this.caches === undefined || this.lazy) return [this.factory.informerFor(resource)];
      throw new ApiError(
        context,
        0,
        "KindNotCached",
        `no controller declares a cache of ${context.resource}: declare it with owns(...) or watches(...) (its cache options scope it), read it with Tokens.ApiReader (a request to the API server each time), or set cache.lazy to cache the whole kind on its first read`,
      );
    }
    const namespace = resource.scope === "Namespaced" ? context.namespace : undefined;
    const holding = declared.filter(
      (c) => namespace === undefined || c.namespace === undefined || c.namespace === namespace,
    );
    if (holding.length === 0) {
      const cached = declared.map((c) => c.namespace).join(", ");
      throw new ApiError(
        context,
        0,
        "NamespaceNotCached",
        `the caches of ${context.resource} hold the namespaces ${cached} (declared by ${controllersOf(declared)}), not ${namespace}: add it to the namespaces of a declaration, or read it with Tokens.ApiReader`,
      );
    }
    return holding.map((c) => c.informer as unknown as SharedIndexInformer<T>);
  }

  /** Fails, naming the index to declare, when `name` is not an index of every cache read. */
  private requireIndex(
    resource: Resource,
    informers: readonly SharedIndexInformer<KubeObject>[],
    name: string,
    context: ApiErrorContext,
  ): void {
    const known = this.caches?.of(resource).length
      ? this.caches.hasIndex(resource, name)
      : informers.every((i) => i.getIndexers()[name] !== undefined);
    if (!known) throw indexNotDeclared(context, name);
  }
}

function controllersOf(caches: readonly DeclaredCache[]): string {
  return [...new Set(caches.flatMap((c) => c.controllers))].map((c) => `"${c}"`).join(", ");
}
