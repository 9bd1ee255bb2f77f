import { labelKeyProblems } from "@tessera/client";

/**
 * Why `name` cannot be a controller's finalizer: the API server wants a
 * qualified name, and one of a controller's own carries a domain prefix
 * (`example.com/cleanup`; bare names are kept for Kubernetes' own,
 * `kubernetes`, `orphan`, `foregroundDeletion`). Empty when it can.
 */
export function finalizerNameProblems(name: unknown): string[] {
  const example = `e.g. finalizer("example.com/cleanup")`;
  if (typeof name !== "string" || name === "") {
    return [`finalizer(name) takes a domain-qualified name, ${example}`];
  }
  if (!name.includes("/")) {
    return [`finalizer("${name}") needs a domain prefix, ${example}: names without one are Kubernetes' own`];
  }
  return labelKeyProblems(name).map(
    (p) => `finalizer("${name}"): ${p.replace("label key", "finalizer name")}`,
  );
}

/**
 * The mismatch between a declared finalizer and the reconciler's
 * `cleanup` method: each needs the other (a finalizer nobody removes would
 * hold every object forever; a `cleanup` without one is never called).
 */
export function cleanupDeclarationProblems(finalizer: string | undefined, hasCleanup: boolean): string[] {
  if (finalizer !== undefined && !hasCleanup) {
    return [
      `finalizer("${finalizer}") is declared but the reconciler has no cleanup(object, ctx) method: add one returning CleanupResult.done once the object's teardown is finished (or drop finalizer())`,
    ];
  }
  if (finalizer === undefined && hasCleanup) {
    return [
      `the reconciler has a cleanup() method but the controller declares no finalizer, so cleanup would never run: add .finalizer("<your-domain>/<name>") to controller(on)`,
    ];
  }
  return [];
}
