import type { ShardField, ShardKeySource } from "./shard-field.js";
import { shardKeyOf } from "./shard-field.js";
import type { SlotSpace } from "./slot-space.js";

/** Options for {@link createDequeueGuard}. */
export interface DequeueGuardOptions {
  /** The ring's slot space. */
  space: SlotSpace;
  /** The shard key field of the primary resource. */
  field: ShardField;
  /**
   * The slots this member may start work on right now: owned and not being
   * released. Read on every call, so a new assignment takes effect at once.
   */
  ownedSlots: () => ReadonlySet<number>;
  /**
   * The cached primary object for a queue key (`namespace/name`, or `name` for
   * cluster-scoped objects). Needed for the uid key only; the namespace key is
   * read from the queue key itself.
   */
  lookup?: (key: string) => ShardKeySource | undefined;
  /**
   * What to do with a key whose object is not in the cache under the uid key
   * (deleted, or evicted because its slot left this member): "drop" (the
   * default) never lets two members work on it; "process" lets a reconcile
   * of a deleted object run here.
   */
  whenUnknown?: "drop" | "process";
}

/**
 * A predicate for the moment a key is taken off the work queue: true when
 * this member may reconcile the key's object now. A key whose slot is not
 * (or no longer) owned is dropped, so a late event cannot start work on a
 * slot that is being released or has moved.
 *
 * ```ts
 * const mayProcess = createDequeueGuard({ space, field: "object.metadata.uid", ownedSlots: () => member.activeSlots, lookup: (k) => store.get(k) });
 * const key = await queue.get();
 * if (!mayProcess(key)) { queue.forget(key); queue.done(key); continue; }
 * ```
 */
export function createDequeueGuard(options: DequeueGuardOptions): (key: string) => boolean {
  const { space, field, ownedSlots, lookup } = options;
  const processUnknown = (options.whenUnknown ?? "drop") === "process";
  if (field === "object.metadata.uid" && !lookup) {
    throw new Error("createDequeueGuard: the uid shard key needs a lookup from queue key to cached object");
  }
  return (key: string): boolean => {
    let value: string;
    if (field === "object.metadata.namespace") {
      const slash = key.indexOf("/");
      value = slash < 0 ? "" : key.slice(0, slash);
    } else {
      const object = lookup!(key);
      if (!object) return processUnknown;
      value = shardKeyOf(object, field);
    }
    return ownedSlots().has(space.slotOfKey(value));
  };
}
