import { strict as assert } from "node:assert";
import { DeletedFinalStateUnknown, metaNamespaceKey } from "@tessera/reflector";
import { type KubeObject } from "@tessera/client";
import type { ResourceEventHandler } from "../src/index.js";

/**
 * A handler that rebuilds the collection from its own notifications and
 * checks, as they come, that they form a consistent sequence: no add for a
 * key it holds, every update's old object is the one it holds, no delete of
 * a key it does not hold.
 */
export class ReplicaHandler<T extends KubeObject> implements ResourceEventHandler<T> {
  readonly objects = new Map<string, T>();
  readonly violations: string[] = [];
  adds = 0;
  updates = 0;
  resyncs = 0;
  deletes = 0;
  tombstones = 0;

  onAdd(obj: T): void {
    const key = metaNamespaceKey(obj);
    if (this.objects.has(key)) this.violations.push(`add of ${key}, which is held`);
    this.objects.set(key, obj);
    this.adds++;
  }

  onUpdate(oldObj: T, newObj: T): void {
    const key = metaNamespaceKey(newObj);
    const held = this.objects.get(key);
    if (held === undefined) this.violations.push(`update of ${key}, which is not held`);
    else if (held !== oldObj) this.violations.push(`update of ${key} from a state not held`);
    if (oldObj === newObj) this.resyncs++;
    else this.updates++;
    this.objects.set(key, newObj);
  }

  onDelete(obj: T | DeletedFinalStateUnknown<T>): void {
    const key = metaNamespaceKey(obj);
    if (obj instanceof DeletedFinalStateUnknown) this.tombstones++;
    if (!this.objects.delete(key)) this.violations.push(`delete of ${key}, which is not held`);
    this.deletes++;
  }

  /** Asserts no violation and that the replica holds exactly `expected` (by key and resourceVersion). */
  assertEquals(expected: ReadonlyMap<string, KubeObject>, who = "replica"): void {
    assert.deepEqual(this.violations.slice(0, 10), [], `${who}: inconsistent sequence`);
    assert.deepEqual(versions(this.objects), versions(expected), `${who} differs`);
  }
}

/** key -> resourceVersion, sorted by key. */
export function versions(
  objects: ReadonlyMap<string, KubeObject> | Iterable<KubeObject>,
): [string, string][] {
  const pairs: [string, string][] =
    objects instanceof Map
      ? Array.from(objects as ReadonlyMap<string, KubeObject>, ([k, o]) => [
          k,
          o.metadata?.resourceVersion ?? "",
        ])
      : Array.from(objects as Iterable<KubeObject>, (o) => [
          metaNamespaceKey(o),
          o.metadata?.resourceVersion ?? "",
        ]);
  return pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}
