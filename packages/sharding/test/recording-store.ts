import {
  DeletedFinalStateUnknown,
  IndexedStore,
  metaNamespaceKey,
  type ReflectorStore,
} from "@tessera/reflector";
import { type KubeObject } from "@tessera/client";

/** One write a {@link RecordingStore} received. */
export interface Write {
  readonly op: "add" | "update" | "delete";
  readonly key: string;
  readonly tombstone: boolean;
  readonly uid: string | undefined;
}

/**
 * A store that keeps what it is told (an {@link IndexedStore}) and records
 * every write. `replace` fails the test: the sharded reflector must never
 * replace the shared store with one range's items.
 */
export class RecordingStore<T extends KubeObject> implements ReflectorStore<T> {
  readonly contents = new IndexedStore<T>();
  readonly writes: Write[] = [];

  add(obj: T): void {
    this.record("add", obj);
    this.contents.add(obj);
  }

  update(obj: T): void {
    this.record("update", obj);
    this.contents.update(obj);
  }

  delete(obj: T | DeletedFinalStateUnknown<T>): void {
    this.record("delete", obj);
    this.contents.delete(obj);
  }

  /** Calls of `replace`, which also throws. */
  replaces = 0;

  replace(): void {
    this.replaces++;
    throw new Error("the shared store's replace was called");
  }

  /** Writes since the last call. */
  take(): Write[] {
    return this.writes.splice(0);
  }

  /** key -> uid/resourceVersion of what is held, sorted by key. */
  view(): [string, string][] {
    return describeObjects(this.contents.list());
  }

  private record(op: Write["op"], obj: T | DeletedFinalStateUnknown<T>): void {
    const tombstone = obj instanceof DeletedFinalStateUnknown;
    const o = tombstone ? obj.obj : obj;
    this.writes.push({ op, key: metaNamespaceKey(obj), tombstone, uid: o.metadata?.uid });
  }
}

/** key -> "uid@resourceVersion", sorted by key. */
export function describeObjects(objects: Iterable<KubeObject>): [string, string][] {
  return Array.from(objects, (o): [string, string] => [
    metaNamespaceKey(o),
    `${o.metadata?.uid}@${o.metadata?.resourceVersion}`,
  ]).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}
