/**
 * The warning for `cache.byKind` keys that name no kind a controller
 * declares (a typo such as `configmap` or `deployments` for
 * `deployments.apps` would otherwise leave that kind cached whole, in
 * silence); `undefined` when every key names a declared kind.
 *
 * A warning, not an error: like `controllers.<name>` for a controller the
 * operator does not register, the file may be shared by builds or
 * deployments that declare different kinds, and an unused entry changes
 * nothing cached.
 *
 * @param keys the keys of `cache.byKind`
 * @param declared every kind the controllers cache, as RBAC names it (`configmaps`, `deployments.apps`)
 */
export function unknownCacheKinds(
  keys: Iterable<string>,
  declared: Iterable<string>,
): { message: string; fields: { keys: string[]; declared: string[] } } | undefined {
  const known = new Set(declared);
  const unknown = [...keys].filter((key) => !known.has(key)).sort();
  if (unknown.length === 0) return undefined;
  const kinds = [...known].sort();
  const named = unknown.map((k) => `"${k}"`).join(", ");
  return {
    message: `cache.byKind ${unknown.length === 1 ? "key" : "keys"} ${named} ${unknown.length === 1 ? "names" : "name"} no kind a controller caches, so ${unknown.length === 1 ? "it changes" : "they change"} nothing: the declared kinds are ${kinds.join(", ") || "none"} (keys are the resource as RBAC names it, plural and group: configmaps, deployments.apps)`,
    fields: { keys: unknown, declared: kinds },
  };
}
