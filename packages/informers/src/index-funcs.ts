import type { IndexFunc } from "@tessera/reflector";
import type { KubeObject, OwnerReference } from "@tessera/client";

function ownerReferences(obj: KubeObject): readonly OwnerReference[] {
  // Checked, not assumed: a transform may have left something else there.
  const refs = obj.metadata?.ownerReferences;
  return Array.isArray(refs) ? refs : [];
}

/** Indexes objects by the value of label `key`; objects without the label are not indexed. */
export function indexByLabel<T extends KubeObject>(key: string): IndexFunc<T> {
  return (obj) => {
    const value = obj.metadata?.labels?.[key];
    return value === undefined ? [] : [value];
  };
}

/** Indexes objects by the UID of every owner in `metadata.ownerReferences`. */
export function indexByOwnerUid<T extends KubeObject>(obj: T): readonly string[] {
  const out: string[] = [];
  for (const ref of ownerReferences(obj)) if (ref.uid) out.push(ref.uid);
  return out;
}

/** Indexes objects by the UID of their controlling owner (`controller: true`), if any. */
export function indexByControllerUid<T extends KubeObject>(obj: T): readonly string[] {
  for (const ref of ownerReferences(obj)) if (ref.controller === true && ref.uid) return [ref.uid];
  return [];
}
