import {
  IndexedStore,
  type DeletedFinalStateUnknown,
  type ReflectorStore,
  type StagedReplace,
} from "../../src/index.js";
import { type KubeObject } from "@tessera/client";

/** One write the reflector made (the steps of a staged replace too, for a {@link StagingRecordingStore}). */
export type StoreWrite =
  | { op: "add" | "update" | "delete"; key: string }
  | { op: "replace"; size: number; resourceVersion: string }
  | { op: "begin" | "abort" }
  | { op: "stage"; key: string }
  | { op: "commit"; resourceVersion: string };

/** An {@link IndexedStore} that also records every write, for asserting what was delivered when. */
export class RecordingStore<T extends KubeObject> implements ReflectorStore<T> {
  readonly inner = new IndexedStore<T>();
  readonly writes: StoreWrite[] = [];

  add(obj: T): void {
    this.inner.add(obj);
    this.writes.push({ op: "add", key: keyOf(obj) });
  }

  update(obj: T): void {
    this.inner.update(obj);
    this.writes.push({ op: "update", key: keyOf(obj) });
  }

  delete(obj: T | DeletedFinalStateUnknown<T>): void {
    this.inner.delete(obj);
    this.writes.push({ op: "delete", key: "key" in obj ? obj.key : keyOf(obj) });
  }

  replace(items: readonly T[], resourceVersion: string): void {
    this.inner.replace(items, resourceVersion);
    this.writes.push({ op: "replace", size: items.length, resourceVersion });
  }
}

function keyOf(obj: KubeObject): string {
  return `${obj.metadata?.namespace ?? ""}/${obj.metadata?.name ?? ""}`;
}

/** A {@link RecordingStore} that can stage a replace (through its {@link IndexedStore}'s), recording each step. */
export class StagingRecordingStore<T extends KubeObject> extends RecordingStore<T> {
  beginReplace(): StagedReplace<T> {
    const staged = this.inner.beginReplace();
    this.writes.push({ op: "begin" });
    return {
      add: (obj) => {
        staged.add(obj);
        this.writes.push({ op: "stage", key: keyOf(obj) });
      },
      commit: (resourceVersion) => {
        staged.commit(resourceVersion);
        this.writes.push({ op: "commit", resourceVersion });
      },
      abort: () => {
        staged.abort();
        this.writes.push({ op: "abort" });
      },
    };
  }
}
