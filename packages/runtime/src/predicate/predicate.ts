import type { KubeObject } from "@tessera/client";

/**
 * Filters the events that reach a controller's queue (controller-runtime's
 * `predicate.Predicate`). A method that is absent lets its events through.
 * Predicates only save work: the reconcile stays level-triggered, so a
 * filtered event is never one the controller needed for correctness unless
 * the predicate says so on purpose.
 */
export interface Predicate<T extends KubeObject = KubeObject> {
  /** Names the predicate in logs and builder errors. */
  readonly name: string;
  /** An object appeared (also for each object of the initial list). */
  create?(object: T): boolean;
  /** An object changed from `oldObject` to `newObject` (also on resync, with equal resourceVersions). */
  update?(oldObject: T, newObject: T): boolean;
  /** An object was deleted. */
  delete?(object: T): boolean;
}

/** Whether `predicate` lets this event through. */
export function admits<T extends KubeObject>(
  predicate: Predicate<T>,
  event:
    | { type: "create"; object: T }
    | { type: "update"; oldObject: T; newObject: T }
    | { type: "delete"; object: T },
): boolean {
  switch (event.type) {
    case "create":
      return predicate.create?.(event.object) ?? true;
    case "update":
      return predicate.update?.(event.oldObject, event.newObject) ?? true;
    case "delete":
      return predicate.delete?.(event.object) ?? true;
  }
}
