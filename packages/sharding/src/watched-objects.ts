import {
  resolveInstrumentation,
  type Instrumentation,
  type ResolvedInstrumentation,
  type Runnable,
  type Syncable,
} from "@tessera/core";
import { IndexedStore, KubeListerWatcher, Reflector } from "@tessera/reflector";
import { type KubeConfigLike, type KubeObject, type Resource } from "@tessera/client";

/** Options for {@link WatchedObjects}. */
export interface WatchedObjectsOptions extends Instrumentation {
  kubeConfig: KubeConfigLike;
  namespace: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Names the reflector in logs and metrics. */
  name: string;
}

/**
 * A few objects of one namespace that the ring reads over and over (the
 * published assignment, the member Leases), kept by a watch so that reading
 * them costs no request: between changes the server sends nothing. Polling
 * them instead cost every member a GET per poll interval, the larger part
 * of a ring's own traffic. Runs once; make a new one to watch again.
 */
export class WatchedObjects<T extends KubeObject> implements Runnable, Syncable {
  private readonly store = new IndexedStore<T>();
  private readonly reflector: Reflector<T>;

  constructor(resource: Resource<T>, options: WatchedObjectsOptions) {
    const tools: ResolvedInstrumentation = resolveInstrumentation(options, "@tessera/sharding");
    this.reflector = new Reflector<T>({
      ...tools,
      name: options.name,
      listerWatcher: new KubeListerWatcher(options.kubeConfig, resource, {
        namespace: options.namespace,
        ...(options.labelSelector !== undefined ? { labelSelector: options.labelSelector } : {}),
        ...(options.fieldSelector !== undefined ? { fieldSelector: options.fieldSelector } : {}),
      }),
      store: this.store,
    });
  }

  /** Watches until `signal` aborts; failures are retried with backoff by the reflector. */
  run(signal: AbortSignal): Promise<void> {
    return this.reflector.run(signal);
  }

  hasSynced(): boolean {
    return this.reflector.hasSynced();
  }

  waitForSync(signal?: AbortSignal): Promise<boolean> {
    return this.reflector.waitForSync(signal);
  }

  /** The objects as last seen; empty before the first sync. */
  list(): T[] {
    return this.store.list();
  }
}
