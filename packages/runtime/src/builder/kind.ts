import type { KubeObject, Resource, GroupVersionKind } from "@tessera/client";

/**
 * A kind as a controller names it: a typed `Resource<T>` handle, or a group,
 * version and kind that the manager resolves through discovery at start-up
 * (for a custom resource without a handle).
 */
export type Kind<T extends KubeObject = KubeObject> = Resource<T> | GroupVersionKind;

/** Whether `kind` is a full handle (it has a plural and a scope). */
export function isResource<T extends KubeObject>(kind: Kind<T>): kind is Resource<T> {
  return "plural" in kind && typeof kind.plural === "string" && "scope" in kind;
}

/** `kind.group/version` (or `version` for core) and the kind, for messages. */
export function describeKind(kind: Kind): string {
  const gv = kind.group === "" ? kind.version : `${kind.group}/${kind.version}`;
  return `${kind.kind} (${gv})`;
}
