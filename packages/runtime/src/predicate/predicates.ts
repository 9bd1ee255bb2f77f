import type { KubeObject } from "@tessera/client";
import { metadataOf } from "@tessera/client";
import type { Predicate } from "./predicate.js";

/**
 * Updates pass only when `metadata.generation` changed: spec changes, not
 * status or metadata changes (for kinds whose status is a subresource).
 * Creates and deletes pass.
 */
export function generationChanged<T extends KubeObject = KubeObject>(): Predicate<T> {
  return {
    name: "generationChanged",
    update: (oldObject, newObject) => metadataOf(oldObject).generation !== metadataOf(newObject).generation,
  };
}

/**
 * Updates pass unless only the status changed (JOSDK's generation-aware
 * default): they pass when `metadata.generation` changed, or the labels,
 * annotations, finalizers, owner references or deletion timestamp did, or
 * the kind keeps no generation (a ConfigMap: every update passes). Unlike
 * {@link generationChanged}, a label or a finalizer added still reconciles.
 * Creates and deletes pass. A controller's primary watch has it by default
 * (see `for(kind, { statusUpdates })`).
 */
export function specOrMetadataChanged<T extends KubeObject = KubeObject>(): Predicate<T> {
  return {
    name: "specOrMetadataChanged",
    update: (oldObject, newObject) => {
      const before = metadataOf(oldObject);
      const after = metadataOf(newObject);
      if (before.generation === undefined || before.generation !== after.generation) return true;
      return (
        !sameStringMap(before.labels, after.labels) ||
        !sameStringMap(before.annotations, after.annotations) ||
        String(before.deletionTimestamp) !== String(after.deletionTimestamp) ||
        !sameJson(before.finalizers, after.finalizers) ||
        !sameJson(before.ownerReferences, after.ownerReferences)
      );
    },
  };
}

/** Updates pass only when `metadata.labels` changed. */
export function labelsChanged<T extends KubeObject = KubeObject>(): Predicate<T> {
  return {
    name: "labelsChanged",
    update: (oldObject, newObject) => !sameStringMap(oldObject.metadata?.labels, newObject.metadata?.labels),
  };
}

/** Updates pass only when `metadata.annotations` changed. */
export function annotationsChanged<T extends KubeObject = KubeObject>(): Predicate<T> {
  return {
    name: "annotationsChanged",
    update: (oldObject, newObject) =>
      !sameStringMap(oldObject.metadata?.annotations, newObject.metadata?.annotations),
  };
}

/** Updates pass only when `metadata.resourceVersion` changed: periodic resyncs are filtered out. */
export function resourceVersionChanged<T extends KubeObject = KubeObject>(): Predicate<T> {
  return {
    name: "resourceVersionChanged",
    update: (oldObject, newObject) =>
      oldObject.metadata?.resourceVersion !== newObject.metadata?.resourceVersion,
  };
}

/**
 * A predicate from one function applied to every event's (new) object, e.g.
 * `predicate("hasLabel", (o) => o.metadata?.labels?.["app"] !== undefined)`.
 * For finer control write a {@link Predicate} object.
 */
export function predicate<T extends KubeObject = KubeObject>(
  name: string,
  test: (object: T) => boolean,
): Predicate<T> {
  return { name, create: test, update: (_old, object) => test(object), delete: test };
}

/** Passes an event when every predicate does. */
export function and<T extends KubeObject>(...predicates: readonly Predicate<T>[]): Predicate<T> {
  return {
    name: `and(${predicates.map((p) => p.name).join(", ")})`,
    create: (o) => predicates.every((p) => p.create?.(o) ?? true),
    update: (a, b) => predicates.every((p) => p.update?.(a, b) ?? true),
    delete: (o) => predicates.every((p) => p.delete?.(o) ?? true),
  };
}

/** Passes an event when any predicate does. */
export function or<T extends KubeObject>(...predicates: readonly Predicate<T>[]): Predicate<T> {
  return {
    name: `or(${predicates.map((p) => p.name).join(", ")})`,
    create: (o) => predicates.some((p) => p.create?.(o) ?? true),
    update: (a, b) => predicates.some((p) => p.update?.(a, b) ?? true),
    delete: (o) => predicates.some((p) => p.delete?.(o) ?? true),
  };
}

/** Passes an event when `p` does not. */
export function not<T extends KubeObject>(p: Predicate<T>): Predicate<T> {
  return {
    name: `not(${p.name})`,
    create: (o) => !(p.create?.(o) ?? true),
    update: (a, b) => !(p.update?.(a, b) ?? true),
    delete: (o) => !(p.delete?.(o) ?? true),
  };
}

function sameStringMap(
  a: Record<string, string> | undefined,
  b: Record<string, string> | undefined,
): boolean {
  const ak = Object.keys(a ?? {});
  if (ak.length !== Object.keys(b ?? {}).length) return false;
  return ak.every((k) => a?.[k] === b?.[k]);
}

function sameJson(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a ?? []) === JSON.stringify(b ?? []);
}
