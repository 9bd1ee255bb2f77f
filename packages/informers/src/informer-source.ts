import type { Runnable, Syncable } from "@tessera/core";
import type { ReflectorHealth, ReflectorStore } from "@tessera/reflector";

/**
 * What fills a {@link SharedIndexInformer}'s queue in place of its own
 * `Reflector` (of @tessera/reflector): anything that writes a collection into a
 * {@link ReflectorStore} and can tell when it has written a complete
 * snapshot. It is a {@link Runnable} (the informer's run runs it, on the
 * same signal) and a {@link Syncable}, plus what the informer reports as its
 * own state. `@tessera/sharding`'s `ShardedReflector` (one reflector per
 * owned hash range, one store) is one; the informer only knows this shape,
 * so it does not depend on the sharding package.
 */
export interface InformerSource extends Runnable, Syncable {
  /** Writes into the store until `signal` aborts; resolves once stopped. A rejection stops the informer. */
  run(signal: AbortSignal): Promise<void>;
  /** Whether the store was given a complete snapshot (may turn false again, e.g. while a new range lists). */
  hasSynced(): boolean;
  /**
   * Resolves `true` once {@link InformerSource.hasSynced} is true, after the
   * writes that make the snapshot were made; `false` if `signal` aborts (or
   * the source stops) first. Never rejects.
   */
  waitForSync(signal?: AbortSignal): Promise<boolean>;
  /** The resourceVersion to report as the informer's, `""` before the first sync. */
  readonly lastSyncResourceVersion: string;
  /** The last failure of a list or watch, if the source tracks one. */
  readonly lastError?: unknown;
  /** Whether it hears from the server (see `Reflector.health`), if the source tracks it. */
  health?(): ReflectorHealth;
}

/**
 * Builds the {@link InformerSource} of an informer around the store the
 * informer hands it (which queues into the informer's DeltaFIFO). Called
 * once, from the informer's constructor.
 *
 * ```ts
 * let sharded!: ShardedReflector<V1ConfigMap>;
 * const informer = new SharedIndexInformer<V1ConfigMap>({
 *   listerWatcher: lw,
 *   source: (store) => (sharded = new ShardedReflector({ listerWatcher: lw, store })),
 * });
 * ```
 */
export type InformerSourceFactory<T> = (store: ReflectorStore<T>) => InformerSource;
