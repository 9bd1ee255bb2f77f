import type { ListerWatcher, ListOptions, WatchEventHandler, WatchOptions } from "@tessera/reflector";
import type { KubeObject, ObjectList, Resource } from "@tessera/client";
import type { HashRange } from "./hash-range.js";
import { controllerOwnerOf, type OwnedObject } from "./owner-routing.js";
import type { SlotSpace } from "./slot-space.js";

/**
 * The label that places an owned object (the ConfigMap a sharded custom
 * resource owns) in its controller owner's slot: its value is the slot of
 * the owner's uid in the ring's slot space, in decimal. KEP-5866 hashes only
 * an object's own uid or namespace, so a child cannot be sharded with its
 * owner by `shardSelector`; a label selector on this label can.
 */
export const OWNER_SLOT_LABEL = "sharding.tessera.dev/owner-slot";

/**
 * The owner-slot label's value for an object controlled by the owner whose
 * uid is `ownerUid`: the slot the ring's own hash (FNV-1a 64 of the uid)
 * puts the owner in, so a member that holds the owner's slot selects its
 * children too. It is a function of the uid and the ring's slot count
 * alone, so it never changes for the life of the object: a handover moves
 * slots, and writes nothing.
 */
export function ownerSlotLabelValue(ownerUid: string, space: SlotSpace): string {
  return String(space.slotOfKey(ownerUid));
}

/**
 * The owner-slot label value `object` should carry: its controller owner's
 * slot, when that owner is of kind `ownerKind` (`apiVersion`'s group and
 * `kind`); undefined when it has no such controller owner.
 */
export function expectedOwnerSlot(
  object: OwnedObject,
  owner: { readonly group: string; readonly kind: string },
  space: SlotSpace,
): string | undefined {
  const ref = controllerOwnerOf(object);
  if (ref?.uid === undefined || ref.kind !== owner.kind || groupOf(ref.apiVersion) !== owner.group)
    return undefined;
  return ownerSlotLabelValue(ref.uid, space);
}

/** The API group of an `apiVersion` (`""` for the core group's `v1`). */
export function groupOf(apiVersion: string | undefined): string {
  const slash = apiVersion?.indexOf("/") ?? -1;
  return slash < 0 ? "" : (apiVersion as string).slice(0, slash);
}

/** The slots a slot-aligned hash range covers, in order. */
export function slotsOfRange(range: HashRange, space: SlotSpace): number[] {
  const first = Number((range.start * BigInt(space.slotCount)) >> 64n);
  const end = Number((range.end * BigInt(space.slotCount) + (1n << 64n) - 1n) >> 64n);
  const out: number[] = [];
  for (let s = first; s < end; s++) out.push(s);
  return out;
}

/**
 * The set-based label selector that selects the owned objects of `slots`:
 * `sharding.tessera.dev/owner-slot in (3,4,5)`, joined after `base` (the
 * cache's own label selector) when there is one.
 */
export function ownerSlotSelector(slots: Iterable<number>, base?: string): string {
  const set = `${OWNER_SLOT_LABEL} in (${[...slots].join(",")})`;
  return base ? `${base},${set}` : set;
}

/** The selector of owned objects without the label (made before an upgrade, or by someone else). */
export function unlabelledSelector(base?: string): string {
  return base ? `${base},!${OWNER_SLOT_LABEL}` : `!${OWNER_SLOT_LABEL}`;
}

/**
 * One slot range of an owned kind behind the {@link ListerWatcher} contract:
 * every LIST and WATCH of `inner` is sent with the owner-slot label
 * selector of the range's slots (after the cache's own label selector), so
 * the server filters; the ShardedReflector's range scope for owned kinds.
 */
export class OwnerSlotListerWatcher<T extends KubeObject> implements ListerWatcher<T> {
  readonly resource: string;
  readonly handle?: Resource<T>;
  readonly namespace?: string;
  /** The label selector sent. */
  readonly labelSelector: string;
  private readonly slots: ReadonlySet<string>;

  constructor(
    private readonly inner: ListerWatcher<T>,
    slots: readonly number[],
    base: string | undefined,
  ) {
    this.resource = inner.resource;
    if (inner.handle !== undefined) this.handle = inner.handle;
    if (inner.namespace !== undefined) this.namespace = inner.namespace;
    this.labelSelector = ownerSlotSelector(slots, base);
    this.slots = new Set(slots.map(String));
  }

  /** Whether `object`'s owner-slot label names one of the range's slots. */
  matchesObject(object: KubeObject): boolean {
    const value = object.metadata?.labels?.[OWNER_SLOT_LABEL];
    return value !== undefined && this.slots.has(value);
  }

  toString(): string {
    return this.labelSelector;
  }

  list(options: ListOptions, signal?: AbortSignal): Promise<ObjectList<T>> {
    return this.inner.list({ ...options, labelSelector: this.labelSelector }, signal);
  }

  watch(options: WatchOptions, onEvent: WatchEventHandler<T>, signal?: AbortSignal): Promise<void> {
    return this.inner.watch({ ...options, labelSelector: this.labelSelector }, onEvent, signal);
  }
}
