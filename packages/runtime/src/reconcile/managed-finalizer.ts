import {
  isInvalid,
  isNotFound,
  objectRefOf,
  type Client,
  type JsonPatchOperation,
  type KubeObject,
  type Resource,
} from "@tessera/client";
import type { CleanupResult } from "./cleanup-result.js";
import type { ReconcileContext } from "./reconciler.js";
import type { Result } from "./result.js";

/**
 * How soon a key comes back when a finalizer patch found the list changed
 * since the cache was read (the `test` failed): the change's own watch
 * event usually brings it back sooner; this is the backstop.
 */
export const STALE_FINALIZERS_RETRY_MS = 1_000;

/** What a {@link ManagedFinalizer} needs. */
export interface ManagedFinalizerOptions<T extends KubeObject> {
  /** The finalizer, e.g. `example.com/cleanup`. */
  readonly name: string;
  /** The primary kind. */
  readonly resource: Resource<T>;
  /** Sends the JSON patches; only `patch` is used (the manager's client). */
  readonly client: Pick<Client, "patch">;
}

/** A reconciler's teardown, called for an object being deleted that holds the finalizer. */
export type Cleanup<T extends KubeObject> = (
  object: T,
  ctx: ReconcileContext<T>,
) => CleanupResult | void | Promise<CleanupResult | void>;

/**
 * The finalizer a controller manages for its reconciler's `cleanup`
 * (kube-rs's `finalizer()`): added to a live object before it is
 * reconciled, removed after a cleanup that is done. Both writes are JSON
 * patches guarded by a `test` (of the whole list before an add, so two adds
 * cannot both append; of the entry before a remove, so the index removed is
 * the finalizer's), built from the cached object: no GET, no PUT of the
 * object, and `patch` the only permission needed. A failed `test` (422: the
 * list changed since the cache read it) retries the key through the queue.
 */
export class ManagedFinalizer<T extends KubeObject> {
  readonly name: string;
  private readonly resource: Resource<T>;
  private readonly client: Pick<Client, "patch">;

  constructor(options: ManagedFinalizerOptions<T>) {
    this.name = options.name;
    this.resource = options.resource;
    this.client = options.client;
  }

  /**
   * One reconcile of `object` with the finalizer: a live object gets the
   * finalizer, then `reconcile` runs; an object being deleted that holds it
   * gets `cleanup`, and loses the finalizer when that is done; one being
   * deleted without it is left alone (other finalizers hold it). No object
   * (gone): `reconcile` runs, as without a finalizer.
   */
  async run(
    object: T | undefined,
    ctx: ReconcileContext<T>,
    cleanup: Cleanup<T>,
    reconcile: () => Result | Promise<Result>,
  ): Promise<Result> {
    if (object === undefined) return reconcile();
    const finalizers = object.metadata?.finalizers;
    const index = finalizers?.indexOf(this.name) ?? -1;
    if (object.metadata?.deletionTimestamp !== undefined) {
      if (index < 0) return;
      const outcome = (await cleanup(object, ctx)) ?? { type: "done" };
      if (outcome.type === "keep") {
        ctx.logger.debug("finalizer kept: cleanup is not done", { finalizer: this.name });
        return outcome.requeueAfterMs ? { requeueAfterMs: outcome.requeueAfterMs } : undefined;
      }
      const removed = await this.patch(object, removeFinalizerPatch(index, this.name), ctx);
      if (removed === "stale") return { requeueAfterMs: STALE_FINALIZERS_RETRY_MS };
      if (removed === "written") ctx.logger.debug("finalizer removed", { finalizer: this.name });
      return;
    }
    if (index < 0) {
      const added = await this.patch(object, addFinalizerPatch(finalizers, this.name), ctx);
      if (added === "gone") return;
      if (added === "stale") return { requeueAfterMs: STALE_FINALIZERS_RETRY_MS };
    }
    // Reconciled now, not on the patch's event: a generation predicate filters that one.
    return reconcile();
  }

  private async patch(
    object: T,
    patch: JsonPatchOperation[],
    ctx: ReconcileContext<T>,
  ): Promise<"written" | "gone" | "stale"> {
    try {
      await this.client.patch(
        this.resource,
        objectRefOf(object),
        { type: "json", patch },
        { signal: ctx.signal },
      );
      return "written";
    } catch (error) {
      if (isNotFound(error)) return "gone";
      if (isInvalid(error)) {
        ctx.logger.debug("finalizers changed since the cache read them; retrying from the cache", {
          finalizer: this.name,
          error: error.message,
        });
        return "stale";
      }
      throw error;
    }
  }
}

/**
 * Appends `name` to `metadata.finalizers` if they are still `current`: the
 * `test` of the whole list (or of its absence) makes a second add, from a
 * copy read before the first, fail rather than append a duplicate (the API
 * server does not deduplicate finalizers).
 */
export function addFinalizerPatch(
  current: readonly string[] | undefined,
  name: string,
): JsonPatchOperation[] {
  return current === undefined
    ? [
        { op: "test", path: "/metadata/finalizers", value: null },
        { op: "add", path: "/metadata/finalizers", value: [name] },
      ]
    : [
        { op: "test", path: "/metadata/finalizers", value: [...current] },
        { op: "add", path: "/metadata/finalizers/-", value: name },
      ];
}

/** Removes the entry at `index` if it is still `name`. */
export function removeFinalizerPatch(index: number, name: string): JsonPatchOperation[] {
  return [
    { op: "test", path: `/metadata/finalizers/${index}`, value: name },
    { op: "remove", path: `/metadata/finalizers/${index}` },
  ];
}
