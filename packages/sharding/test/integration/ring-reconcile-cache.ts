import type { V1ConfigMap } from "@kubernetes/client-node";
import {
  DeletedFinalStateUnknown,
  IndexedStore,
  metaNamespaceKey,
  type ReflectorStore,
} from "@tessera/reflector";

/** Options for {@link EnqueuingCache}. */
export interface EnqueuingCacheOptions {
  /** Whether a change of this object is this member's to reconcile now (its slot is active). */
  mayEnqueue: (cm: V1ConfigMap) => boolean;
  enqueue: (key: string) => void;
}

/**
 * The smallest informer the reconcile-ledger test needs: what a reflector
 * writes into, kept in a cache, with the key of every object added, updated,
 * deleted or listed enqueued when the object is this member's to reconcile.
 */
export class EnqueuingCache implements ReflectorStore<V1ConfigMap> {
  private readonly store = new IndexedStore<V1ConfigMap>();

  constructor(private readonly options: EnqueuingCacheOptions) {}

  getByKey(key: string): V1ConfigMap | undefined {
    return this.store.getByKey(key);
  }

  list(): V1ConfigMap[] {
    return this.store.list();
  }

  add(cm: V1ConfigMap): void {
    this.store.add(cm);
    this.notify(cm);
  }

  update(cm: V1ConfigMap): void {
    this.store.update(cm);
    this.notify(cm);
  }

  delete(cm: V1ConfigMap | DeletedFinalStateUnknown<V1ConfigMap>): void {
    this.store.delete(cm);
    this.notify(cm instanceof DeletedFinalStateUnknown ? cm.obj : cm);
  }

  replace(items: readonly V1ConfigMap[], resourceVersion: string): void {
    this.store.replace(items, resourceVersion);
    for (const cm of items) this.notify(cm);
  }

  private notify(cm: V1ConfigMap): void {
    if (this.options.mayEnqueue(cm)) this.options.enqueue(metaNamespaceKey(cm));
  }
}
