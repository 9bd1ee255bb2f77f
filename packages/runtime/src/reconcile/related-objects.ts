import { metadataOf, type KubeObject, type Reader, type Resource } from "@tessera/client";
import type { IndexFunction } from "../builder/cache-options.js";
import { describeKind, isResource, type Kind } from "../builder/kind.js";

/**
 * The index the runtime declares on the cache of every `owns` kind: an
 * object is filed under the `uid` of its controller owner (the
 * `ownerReference` with `controller: true`). A uid names one object for its
 * life, so a primary deleted and made again under the same name does not
 * see the children of the old one. The name is reserved (a declaration may
 * not use it).
 */
export const CONTROLLER_OWNER_INDEX = "tessera.dev/controller-owner-uid";

/** The function of {@link CONTROLLER_OWNER_INDEX}: one function, so every controller's declaration of it is the same. */
export const controllerOwnerUid: IndexFunction = (object) => {
  const ref = metadataOf(object).ownerReferences?.find((r) => r.controller === true);
  return ref?.uid ? [ref.uid] : [];
};

/** What {@link RelatedObjects} reads with, and which kinds the controller declared. */
export interface RelatedObjectsOptions {
  /** The controller's name, for messages. */
  readonly controller: string;
  /** The cached client (the manager's `Tokens.Client`, or the `FakeClient` in a unit test). */
  readonly reader: Reader;
  /** The kinds declared with `owns`, resolved: the ones the owner index is kept on. */
  readonly owned: readonly Resource[];
  /** Every kind the controller declared (`for`, `owns`, `watches`), resolved: how a GroupVersionKind given to `related` is found. */
  readonly declared: readonly Resource[];
}

/**
 * `ctx.owned(kind)` and `ctx.related(kind, index, value)`: reads of the
 * cached client by an index, so a reconcile finds its children and the
 * objects it refers to without a LIST and without a scan of a cache. They
 * read the caches the controllers declared (in `sharded` mode the ring's
 * share of the primary kind), wait for them to sync as every cached read
 * does, and fail with the cached client's errors (`IndexNotDeclared` for an
 * index nobody declared, `KindNotCached` for a kind nobody declared).
 */
export class RelatedObjects {
  constructor(private readonly options: RelatedObjectsOptions) {}

  /**
   * The cached objects of `kind` (declared with `owns`) whose controller
   * owner is `owner`: none when `owner` is undefined (the primary is gone).
   */
  async owned<U extends KubeObject>(
    kind: Kind<U>,
    owner: KubeObject | undefined,
    signal: AbortSignal,
  ): Promise<U[]> {
    const resource = this.options.owned.find((r) => sameKind(r, kind));
    if (resource === undefined) {
      throw new Error(
        `controller ${this.options.controller}: ctx.owned(${describeKind(kind)}): the kind is not declared with owns(); declare owns(${kind.kind}s) (the runtime keeps an index of owned kinds by their controller owner), or read it with ctx.related by an index you declare`,
      );
    }
    const meta = owner === undefined ? undefined : metadataOf(owner);
    if (!meta?.uid) return [];
    return this.options.reader.list(resource as Resource<U>, {
      ...(resource.scope === "Namespaced" && meta.namespace ? { namespace: meta.namespace } : {}),
      index: { name: CONTROLLER_OWNER_INDEX, value: meta.uid },
      signal,
    });
  }

  /**
   * The cached objects of `kind` filed under `value` in the index `index`,
   * declared with `indexes` on `for`, `owns` or `watches` of the kind (by
   * this controller or another of the manager).
   */
  related<U extends KubeObject>(
    kind: Kind<U>,
    index: string,
    value: string,
    signal: AbortSignal,
  ): Promise<U[]> {
    const resource =
      this.options.declared.find((r) => sameKind(r, kind)) ?? (isResource(kind) ? kind : undefined);
    if (resource === undefined) {
      return Promise.reject(
        new Error(
          `controller ${this.options.controller}: ctx.related(${describeKind(kind)}, "${index}"): the kind is not declared by this controller and is no Resource handle; declare it with owns() or watches(), or pass its Resource handle`,
        ),
      );
    }
    return this.options.reader.list(resource as Resource<U>, { index: { name: index, value }, signal });
  }
}

/** Whether `resource` is `kind` (any version: the version does not change which objects are cached). */
function sameKind(resource: Resource, kind: Kind): boolean {
  return resource.group === kind.group && resource.kind === kind.kind;
}
