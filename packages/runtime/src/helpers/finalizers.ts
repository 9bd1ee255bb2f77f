import type { KubeObject, Resource, Client, ObjectRef } from "@tessera/client";
import { metadataOf } from "@tessera/client";
import { retryOnConflict, type RetryOnConflictOptions } from "./retry-on-conflict.js";

/** Options of the finalizer helpers. */
export interface FinalizerOptions extends RetryOnConflictOptions {
  /** The field manager of the writes; default the client's. */
  fieldManager?: string;
}

const refOf = (object: KubeObject): ObjectRef => {
  const meta = object.metadata ?? {};
  return meta.namespace ? { name: meta.name ?? "", namespace: meta.namespace } : { name: meta.name ?? "" };
};
const describe = (resource: Resource, ref: ObjectRef) =>
  `${resource.plural}${resource.group ? `.${resource.group}` : ""} ${ref.namespace ? `${ref.namespace}/` : ""}${ref.name}`;
const finalizersOf = (object: KubeObject): string[] => object.metadata?.finalizers ?? [];

/**
 * Changes the finalizers of the object at `ref` on the server: reads it
 * fresh (`api` must read from the API server, e.g. `Tokens.ApiClient`),
 * applies `change`, and writes it quoting the resourceVersion it read,
 * retrying on conflict. Resolves with the object written, the object as read
 * when there was nothing to change, or `undefined` when it is gone.
 */
async function changeFinalizers<T extends KubeObject>(
  api: Client,
  resource: Resource<T>,
  ref: ObjectRef,
  change: (finalizers: string[]) => string[] | undefined,
  options: FinalizerOptions,
): Promise<T | undefined> {
  return retryOnConflict(
    describe(resource, ref),
    async () => {
      const fresh = await api.get(resource, ref, options.signal ? { signal: options.signal } : {});
      if (!fresh) return undefined;
      const next = change(finalizersOf(fresh));
      if (next === undefined) return fresh;
      return api.update(
        resource,
        { ...fresh, metadata: { ...fresh.metadata, finalizers: next } },
        {
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.fieldManager ? { fieldManager: options.fieldManager } : {}),
        },
      );
    },
    options,
  );
}

/** Adds `finalizer` to the object unless it has it (conflicts retried). */
export function addFinalizer<T extends KubeObject>(
  api: Client,
  resource: Resource<T>,
  object: T,
  finalizer: string,
  options: FinalizerOptions = {},
): Promise<T | undefined> {
  return changeFinalizers(
    api,
    resource,
    refOf(object),
    (list) => (list.includes(finalizer) ? undefined : [...list, finalizer]),
    options,
  );
}

/** Removes `finalizer` from the object if it has it (conflicts retried). */
export function removeFinalizer<T extends KubeObject>(
  api: Client,
  resource: Resource<T>,
  object: T,
  finalizer: string,
  options: FinalizerOptions = {},
): Promise<T | undefined> {
  return changeFinalizers(
    api,
    resource,
    refOf(object),
    (list) => (list.includes(finalizer) ? list.filter((f) => f !== finalizer) : undefined),
    options,
  );
}

/** What {@link handleFinalizer} did. */
export type HandleFinalizerOutcome = "active" | "finalized" | "gone";

/**
 * The finalizer dance by hand, in one call at the top of a reconcile (a
 * controller that declares `finalizer(name)` and a `cleanup` method has the
 * runtime do it instead, with JSON patches and no GET):
 * - the object is live: `finalizer` is added if missing; resolves `"active"`,
 *   and the reconcile goes on;
 * - the object is being deleted and carries `finalizer`: `cleanup` runs, and
 *   only when it succeeded is the finalizer removed (the API server then
 *   deletes the object); resolves `"finalized"`. A cleanup that throws leaves
 *   the finalizer, so the object stays and the reconcile is retried with the
 *   controller's backoff;
 * - the object is being deleted without it, or is gone: `"gone"`.
 *
 * ```ts
 * const state = await handleFinalizer(api, Widgets, widget, "example.com/cleanup", () => deleteExternalRecord(widget));
 * if (state !== "active") return;
 * ```
 */
export async function handleFinalizer<T extends KubeObject>(
  api: Client,
  resource: Resource<T>,
  object: T,
  finalizer: string,
  cleanup: (object: T) => Promise<void>,
  options: FinalizerOptions = {},
): Promise<HandleFinalizerOutcome> {
  const deleting = metadataOf(object).deletionTimestamp !== undefined;
  if (!deleting) {
    if (!finalizersOf(object).includes(finalizer)) {
      const written = await addFinalizer(api, resource, object, finalizer, options);
      if (written === undefined) return "gone";
    }
    return "active";
  }
  if (!finalizersOf(object).includes(finalizer)) return "gone";
  await cleanup(object);
  await removeFinalizer(api, resource, object, finalizer, options);
  return "finalized";
}
