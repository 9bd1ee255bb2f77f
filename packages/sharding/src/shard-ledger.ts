import { DeletedFinalStateUnknown, type KeyFunc, type ReflectorStore } from "@tessera/reflector";
import { type KubeObject } from "@tessera/client";

/** A range reflector's identity in the ledger, with the number of keys it claims. */
export interface ClaimOwner {
  /** How many keys this owner claims (shown or not). */
  claims: number;
}

interface Claim<T> {
  owner: ClaimOwner;
  obj: T;
}

/** The claim the store shows for a key, and, rarely, other ranges' claims on the same key. */
interface Entry<T> extends Claim<T> {
  others: Claim<T>[] | undefined;
}

/**
 * The objects of every range a sharded reflector watches, by key, and which
 * range each came from; the only writer of the shared store.
 *
 * Ranges are watched on separate streams, so their events are not ordered
 * with each other. With the uid shard key, an object deleted and created
 * again under the same name usually hashes into another range, and the new
 * object's ADDED can arrive before the old one's DELETED. So a key may be
 * claimed by two ranges for a while: the store shows the claim written last,
 * and a range dropping its claim only deletes the key from the store when no
 * other range still claims it (otherwise the other claim is shown instead).
 * Once every stream has caught up, each key has at most one claim.
 */
export class ShardLedger<T extends KubeObject> {
  private readonly entries = new Map<string, Entry<T>>();
  private lastRV = "";

  constructor(
    private readonly store: ReflectorStore<T>,
    private readonly keyOf: KeyFunc<T>,
  ) {}

  /** Keys in the store. */
  get size(): number {
    return this.entries.size;
  }

  /** The resourceVersion last written by any range (of an object, or of a relist); `""` before any. */
  get lastResourceVersion(): string {
    return this.lastRV;
  }

  /** `owner` saw `obj` created or changed. */
  put(owner: ClaimOwner, obj: T): void {
    this.record(obj.metadata?.resourceVersion);
    this.claim(owner, this.keyOf(obj), obj, false);
  }

  /** `owner` saw `obj` deleted (its final state, or a tombstone). */
  remove(owner: ClaimOwner, obj: T | DeletedFinalStateUnknown<T>): void {
    if (obj instanceof DeletedFinalStateUnknown) {
      this.drop(owner, obj.key, obj);
      return;
    }
    this.record(obj.metadata?.resourceVersion);
    this.drop(owner, this.keyOf(obj), obj);
  }

  /**
   * `owner`'s range holds exactly `items` as of `resourceVersion`: what the
   * store lacks is added, what changed is updated (an object at the same
   * resourceVersion is not written again), and keys `owner` claimed that are
   * missing are deleted with a {@link DeletedFinalStateUnknown}. Other
   * ranges' keys are not touched.
   */
  replace(owner: ClaimOwner, items: readonly T[], resourceVersion: string): void {
    const listed = new Set<string>();
    for (const obj of items) {
      const key = this.keyOf(obj);
      listed.add(key);
      this.claim(owner, key, obj, true);
    }
    if (owner.claims > listed.size) {
      // Deleting the entry being visited is safe in a Map iteration; drop adds none.
      for (const [key, entry] of this.entries) {
        if (listed.has(key)) continue;
        const mine = entry.owner === owner ? entry : entry.others?.find((c) => c.owner === owner);
        if (mine) this.drop(owner, key, new DeletedFinalStateUnknown(key, mine.obj));
      }
    }
    this.record(resourceVersion);
  }

  /**
   * Ends `owner`'s claims: each claimed object goes to the owner `route`
   * names for it (a narrower range taking over part of `owner`'s), or is
   * evicted (deleted from the store with its last known state) when `route`
   * names none.
   */
  release(owner: ClaimOwner, route: (obj: T) => ClaimOwner | undefined): void {
    if (owner.claims === 0) return;
    for (const [key, entry] of this.entries) {
      const mine = entry.owner === owner ? entry : entry.others?.find((c) => c.owner === owner);
      if (!mine) continue;
      const heir = route(mine.obj);
      if (heir) {
        mine.owner = heir;
        heir.claims++;
        owner.claims--;
      } else {
        this.drop(owner, key, mine.obj);
      }
    }
  }

  private claim(owner: ClaimOwner, key: string, obj: T, fromRelist: boolean): void {
    const entry = this.entries.get(key);
    if (entry === undefined) {
      this.entries.set(key, { owner, obj, others: undefined });
      owner.claims++;
      this.store.add(obj);
      return;
    }
    if (entry.owner === owner) {
      const unchanged = fromRelist && sameVersion(entry.obj, obj);
      entry.obj = obj;
      if (!unchanged) this.store.update(obj);
      return;
    }
    // Another range's object is shown under this key: the newer write wins, the old claim waits for its delete.
    const others = entry.others ?? [];
    const i = others.findIndex((c) => c.owner === owner);
    if (i >= 0) others.splice(i, 1);
    else owner.claims++;
    others.push({ owner: entry.owner, obj: entry.obj });
    entry.others = others;
    this.store.delete(entry.obj);
    entry.owner = owner;
    entry.obj = obj;
    this.store.add(obj);
  }

  /** Drops `owner`'s claim on `key`; `gone` is what the store is told was deleted, if the key leaves it. */
  private drop(owner: ClaimOwner, key: string, gone: T | DeletedFinalStateUnknown<T>): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    if (entry.owner !== owner) {
      const i = entry.others?.findIndex((c) => c.owner === owner) ?? -1;
      if (i < 0) return;
      entry.others!.splice(i, 1);
      if (entry.others!.length === 0) entry.others = undefined;
      owner.claims--;
      return;
    }
    owner.claims--;
    const next = entry.others?.pop();
    if (next === undefined) {
      this.entries.delete(key);
      this.store.delete(gone);
      return;
    }
    if (entry.others!.length === 0) entry.others = undefined;
    this.store.delete(gone);
    entry.owner = next.owner;
    entry.obj = next.obj;
    this.store.add(next.obj);
  }

  private record(rv: string | undefined): void {
    if (rv) this.lastRV = rv;
  }
}

function sameVersion(a: KubeObject, b: KubeObject): boolean {
  const rv = a.metadata?.resourceVersion;
  return rv !== undefined && rv === b.metadata?.resourceVersion;
}
