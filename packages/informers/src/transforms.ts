import type { KubeObject } from "@tessera/client";

/**
 * Changes each object before it is cached (and before any handler sees it).
 * It must keep `metadata.name`, `namespace`, `uid` and `resourceVersion`.
 * The object handed in was just decoded and is not shared, so a transform
 * may return it changed or return a new one.
 */
export type Transform<T> = (obj: T) => T;

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/**
 * Drops `metadata.managedFields`, the server-side apply bookkeeping that is
 * often the largest part of a small object and that controllers rarely read.
 */
export function stripManagedFields<T extends KubeObject>(obj: T): T {
  const metadata: (KubeObject["metadata"] & { managedFields?: unknown }) | undefined = obj.metadata;
  if (!metadata || metadata.managedFields === undefined) return obj;
  // A fresh object (rather than `delete`) keeps the metadata's shape compact in V8.
  const { managedFields: _dropped, ...rest } = metadata;
  return { ...obj, metadata: rest };
}

/** Drops the `kubectl.kubernetes.io/last-applied-configuration` annotation (a copy of the whole object). */
export function stripLastAppliedConfiguration<T extends KubeObject>(obj: T): T {
  const annotations = obj.metadata?.annotations;
  if (!annotations || !(LAST_APPLIED in annotations)) return obj;
  const { [LAST_APPLIED]: _dropped, ...rest } = annotations;
  return { ...obj, metadata: { ...obj.metadata, annotations: rest } };
}

/** One transform applying `transforms` left to right. */
export function composeTransforms<T>(...transforms: readonly Transform<T>[]): Transform<T> {
  if (transforms.length === 1) return transforms[0] as Transform<T>;
  return (obj) => {
    let out = obj;
    for (const t of transforms) out = t(out);
    return out;
  };
}
