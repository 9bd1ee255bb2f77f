import type { KubeObject, Resource, Client, LabelSelectorInput } from "@tessera/client";
import { labelMatcher, controllerOf, removeOwnerReference, setControllerReference } from "@tessera/client";
import { retryOnConflict, type RetryOnConflictOptions } from "./retry-on-conflict.js";

/** What {@link adoptOrphans} changed, by object name. */
export interface AdoptionResult {
  readonly adopted: string[];
  readonly released: string[];
}

/**
 * controller-runtime's (and the ReplicaSet controller's) adoption: objects of
 * `resource` in `owner`'s namespace that match `selector` and have no
 * controller are adopted (`owner` becomes their controller); objects `owner`
 * controls that no longer match are released (its reference removed).
 * Objects controlled by someone else are left alone. Every write re-reads the
 * object from the server (`api` must read from the API server) and retries on
 * conflict; an object deleted meanwhile is skipped.
 *
 * ```ts
 * const { adopted, released } = await adoptOrphans(api, ConfigMaps, widget, { "app.kubernetes.io/instance": name });
 * ```
 */
export async function adoptOrphans<T extends KubeObject>(
  api: Client,
  resource: Resource<T>,
  owner: KubeObject,
  selector: LabelSelectorInput,
  options: RetryOnConflictOptions = {},
): Promise<AdoptionResult> {
  const namespace = owner.metadata?.namespace;
  const uid = owner.metadata?.uid;
  const matches = labelMatcher(selector);
  const result: AdoptionResult = { adopted: [], released: [] };
  const all = await api.list(resource, {
    ...(namespace ? { namespace } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  for (const object of all) {
    const name = object.metadata?.name ?? "";
    const controller = controllerOf(object);
    const matching = matches(object.metadata?.labels ?? {});
    const change =
      matching && controller === undefined
        ? "adopt"
        : !matching && controller?.uid === uid
          ? "release"
          : undefined;
    if (change === undefined) continue;
    const ref = namespace ? { name, namespace } : { name };
    const done = await retryOnConflict(
      `${resource.plural} ${namespace ? `${namespace}/` : ""}${name}`,
      async () => {
        const fresh = await api.get(resource, ref, options.signal ? { signal: options.signal } : {});
        if (!fresh) return false;
        const freshController = controllerOf(fresh);
        if (change === "adopt" && freshController !== undefined) return false;
        if (change === "release" && freshController?.uid !== uid) return false;
        const next =
          change === "adopt" ? setControllerReference<T>(owner, fresh) : removeOwnerReference(owner, fresh);
        await api.update(resource, next, options.signal ? { signal: options.signal } : {});
        return true;
      },
      options,
    );
    if (done) (change === "adopt" ? result.adopted : result.released).push(name);
  }
  return result;
}
