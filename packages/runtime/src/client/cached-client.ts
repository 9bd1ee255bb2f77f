import type { SharedIndexInformer, SharedInformerFactory } from "@tessera/informers";
import { describeResource, type KubeObject, type Resource, ApiError, labelMatcher } from "@tessera/client";
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

/**
 * controller-runtime's split client: `get` and `list` read the informer
 * cache of the manager (the informer for a resource starts on its first read
 * and the read waits for it to sync), writes go to the API server through
 * the writer (an `ApiClient`).
 *
 * Reads return the cached objects themselves, not copies: copying every
 * object of every list costs more than the reconcile, and a reconciler that
 * needs to change an object builds an apply configuration or a patch
 * anyway. Do not mutate what a read returns: it would change the cache of
 * every controller (clone with `structuredClone` first).
 */
export class CachedClient implements Client {
  readonly reads = "cache";
  constructor(
    private readonly factory: SharedInformerFactory,
    private readonly writer: Client,
  ) {}

  async get<T extends KubeObject>(
    resource: Resource<T>,
    ref: ObjectRef,
    options: { signal?: AbortSignal } = {},
  ): Promise<T | undefined> {
    const informer = await this.synced(resource, "get", options.signal, ref);
    const key = resource.scope === "Namespaced" && ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
    return informer.lister.getByKey(key);
  }

  async list<T extends KubeObject>(resource: Resource<T>, options: ListOptions = {}): Promise<T[]> {
    // Parsed before the wait for the cache: a selector the server would refuse fails at once.
    const matches = options.labels === undefined ? undefined : labelMatcher(options.labels);
    const informer = await this.synced(resource, "list", options.signal, { namespace: options.namespace });
    const namespace = resource.scope === "Namespaced" ? options.namespace : undefined;
    let items = namespace ? informer.lister.namespace(namespace).list() : informer.lister.list();
    if (matches) items = items.filter((o) => matches(o.metadata?.labels ?? {}));
    if (options.fields !== undefined) {
      const fields = Object.entries(options.fields);
      items = items.filter((o) => fields.every(([path, value]) => fieldValue(o, path) === value));
    }
    return items;
  }

  create<T extends KubeObject>(resource: Resource<T>, object: T, options?: WriteOptions): Promise<T> {
    return this.writer.create(resource, object, options);
  }

  update<T extends KubeObject>(resource: Resource<T>, object: T, options?: WriteOptions): Promise<T> {
    return this.writer.update(resource, object, options);
  }

  patch<T extends KubeObject>(
    resource: Resource<T>,
    ref: ObjectRef,
    patch: Patch,
    options?: WriteOptions,
  ): Promise<T> {
    return this.writer.patch(resource, ref, patch, options);
  }

  apply<T extends KubeObject>(
    resource: Resource<T>,
    object: ApplyConfiguration<T>,
    options?: ApplyOptions,
  ): Promise<T> {
    return this.writer.apply(resource, object, options);
  }

  delete<T extends KubeObject>(
    resource: Resource<T>,
    ref: ObjectRef,
    options?: DeleteOptions,
  ): Promise<boolean> {
    return this.writer.delete(resource, ref, options);
  }

  updateStatus<T extends KubeObject>(resource: Resource<T>, object: T, options?: WriteOptions): Promise<T> {
    return this.writer.updateStatus(resource, object, options);
  }

  applyStatus<T extends KubeObject>(
    resource: Resource<T>,
    object: ApplyConfiguration<T>,
    options?: ApplyOptions,
  ): Promise<T> {
    return this.writer.applyStatus(resource, object, options);
  }

  /** The cache of `resource`, started on first use and synced. */
  private async synced<T extends KubeObject>(
    resource: Resource<T>,
    verb: string,
    signal: AbortSignal | undefined,
    ref: { namespace?: string | undefined; name?: string },
  ): Promise<SharedIndexInformer<T>> {
    const informer = this.factory.informerFor(resource);
    if (!informer.hasSynced() && !(await informer.waitForSync(signal))) {
      signal?.throwIfAborted();
      throw new ApiError(
        { verb, resource: describeResource(resource), namespace: ref.namespace, name: ref.name },
        0,
        "CacheNotSynced",
        "the cache stopped before it synced (the manager is shutting down)",
      );
    }
    return informer;
  }
}

/** The string at a dotted path (`metadata.name`, `spec.nodeName`), as a field selector compares it. */
function fieldValue(object: KubeObject, path: string): string | undefined {
  let at: unknown = object;
  for (const part of path.split(".")) {
    if (at === null || typeof at !== "object") return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  // Field selectors compare scalars; an object or array at the path matches nothing.
  return typeof at === "string" || typeof at === "number" || typeof at === "boolean" ? String(at) : undefined;
}
