import type { KubeObject, OwnerReference } from "./kube-object.js";
import type { Resource } from "./resource.js";

/** An owner reference that cannot be set: names both objects and the rule. */
export class OwnerReferenceError extends Error {
  override name = "OwnerReferenceError";
}

/** `kind namespace/name` of an object, for messages. */
function describe(object: KubeObject): string {
  const meta = object.metadata ?? {};
  return `${object.kind ?? "object"} ${meta.namespace ? `${meta.namespace}/` : ""}${meta.name ?? "(unnamed)"}`;
}

const groupOf = (apiVersion: string) => (apiVersion.includes("/") ? apiVersion.split("/")[0] : "");

function referenceTo(owner: KubeObject, object: KubeObject): OwnerReference {
  const meta = owner.metadata ?? {};
  if (!owner.apiVersion || !owner.kind || !meta.name || !meta.uid) {
    throw new OwnerReferenceError(
      `${describe(owner)} cannot own ${describe(object)}: the owner needs apiVersion, kind, metadata.name and metadata.uid (read it from the server or the cache first)`,
    );
  }
  const ownerNamespace = meta.namespace;
  const objectNamespace = object.metadata?.namespace;
  if (ownerNamespace) {
    if (!objectNamespace) {
      throw new OwnerReferenceError(
        `${describe(owner)} cannot own ${describe(object)}: a cluster-scoped object cannot have a namespaced owner`,
      );
    }
    if (objectNamespace !== ownerNamespace) {
      throw new OwnerReferenceError(
        `${describe(owner)} cannot own ${describe(object)}: owner references cannot cross namespaces`,
      );
    }
  }
  return { apiVersion: owner.apiVersion, kind: owner.kind, name: meta.name, uid: meta.uid };
}

/** Whether `ref` points at the same object as `other` (same group, kind and name, as apimachinery compares). */
function sameOwner(ref: OwnerReference, other: OwnerReference): boolean {
  return (
    groupOf(ref.apiVersion) === groupOf(other.apiVersion) &&
    ref.kind === other.kind &&
    ref.name === other.name
  );
}

function withReferences<T extends KubeObject>(object: T, refs: OwnerReference[]): T {
  return { ...object, metadata: { ...object.metadata, ownerReferences: refs } };
}

/**
 * `object` with `owner` as its controller (controller-runtime's
 * `SetControllerReference`): an owner reference with `controller: true` and
 * `blockOwnerDeletion: true`, so deleting the owner garbage-collects it and
 * the owner's controller is enqueued for its events. Refuses, with an
 * {@link OwnerReferenceError} naming both, an object already controlled by
 * another owner, an owner in another namespace, and a namespaced owner of a
 * cluster-scoped object. Returns a new object; the input is not changed.
 *
 * The object's type is never inferred from `object` itself, so an object
 * literal is checked against the kind's type (a misspelled field is an
 * error, as it is when the literal is passed to a client directly): it comes
 * from where the result goes, or is given (`setControllerReference<V1Secret>(...)`).
 * With neither, `object` is typed `never` and every argument is refused. To
 * apply a child, prefer `client.apply(kind, object, { controller: owner })`.
 *
 * ```ts
 * await client.create(ConfigMaps, setControllerReference(widget, { metadata: { name, namespace }, data }));
 * ```
 */
export function setControllerReference<T extends KubeObject = never>(
  owner: KubeObject,
  object: NoInfer<T>,
): T {
  const ref: OwnerReference = { ...referenceTo(owner, object), controller: true, blockOwnerDeletion: true };
  const refs = [...(object.metadata?.ownerReferences ?? [])];
  const current = refs.find((r) => r.controller);
  if (current && !sameOwner(current, ref)) {
    throw new OwnerReferenceError(
      `${describe(object)} is already controlled by ${current.kind} ${current.name}; it cannot also be controlled by ${describe(owner)}`,
    );
  }
  const index = refs.findIndex((r) => sameOwner(r, ref));
  if (index >= 0) refs[index] = ref;
  else refs.push(ref);
  return withReferences(object, refs);
}

/**
 * `object` with `owner` as a (non-controller) owner; an existing reference to
 * it is updated, its controller flag kept. Typed like
 * {@link setControllerReference}: the object's type comes from where the
 * result goes, or is given.
 */
export function setOwnerReference<T extends KubeObject = never>(owner: KubeObject, object: NoInfer<T>): T {
  const ref = referenceTo(owner, object);
  const refs = [...(object.metadata?.ownerReferences ?? [])];
  const index = refs.findIndex((r) => sameOwner(r, ref));
  if (index >= 0) refs[index] = { ...refs[index], ...ref };
  else refs.push(ref);
  return withReferences(object, refs);
}

/** `object` without any reference to `owner` (releasing it, e.g. an orphan that no longer matches a selector). */
export function removeOwnerReference<T extends KubeObject>(owner: KubeObject, object: T): T {
  const meta = owner.metadata ?? {};
  const target: OwnerReference = {
    apiVersion: owner.apiVersion ?? "",
    kind: owner.kind ?? "",
    name: meta.name ?? "",
    uid: meta.uid ?? "",
  };
  const refs = (object.metadata?.ownerReferences ?? []).filter((r) => !sameOwner(r, target));
  return withReferences(object, refs);
}

/** The controller reference of `object`, if it has one. */
export function controllerOf(object: KubeObject): OwnerReference | undefined {
  return object.metadata?.ownerReferences?.find((r) => r.controller);
}

/**
 * What `apply(resource, object, { controller })` applies: `object` with its
 * `apiVersion` and `kind` filled from the handle (so a refusal names the
 * object as kubectl would) and `owner` as its controller; `object` itself
 * when there is no owner. One function for every client, so they refuse the
 * same objects with the same words.
 */
export function applyConfigurationOwnedBy<T extends KubeObject, C extends KubeObject>(
  resource: Pick<Resource<T>, "apiVersion" | "kind">,
  object: C,
  owner: KubeObject | undefined,
): C {
  if (!owner) return object;
  return setControllerReference<C>(owner, {
    apiVersion: resource.apiVersion,
    kind: resource.kind,
    ...object,
  });
}
