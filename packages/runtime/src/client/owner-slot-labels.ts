import {
  applyConfigurationOwnedBy,
  type ApplyConfiguration,
  type ApplyOptions,
  type Client,
  type DeleteOptions,
  type KubeObject,
  type ListOptions,
  type ObjectRef,
  type Patch,
  type Resource,
  type WriteOptions,
} from "@tessera/client";
import { OWNER_SLOT_LABEL } from "@tessera/sharding";

/** Tells the owner-slot label an object written with its controller reference must carry. */
export interface OwnerSlots {
  /** The label's value when `object`'s controller owner is of a sharded kind; undefined otherwise. */
  ownerSlot(object: KubeObject): string | undefined;
}

/**
 * The manager's writes, with the owner-slot label (`OWNER_SLOT_LABEL`) set
 * on every object written with a controller reference to the primary kind
 * of a sharded controller: create, update, apply (with or without
 * `{ controller }`), and merge or strategic patches that carry the
 * controller reference. The label names the owner's slot in its ring, so
 * the member holding that slot is the one member whose cache selects the
 * object. A label edited by hand is put back by the next write, and an
 * object written before sharding (or an upgrade) gets it the same way.
 * JSON patches, status writes, reads and deletes pass through unchanged.
 */
export class OwnerSlotLabels implements Client {
  readonly reads: Client["reads"];

  constructor(
    private readonly writer: Client,
    private readonly owners: OwnerSlots,
  ) {
    this.reads = writer.reads;
  }

  get<T extends KubeObject>(
    resource: Resource<T>,
    ref: ObjectRef,
    options?: { signal?: AbortSignal },
  ): Promise<T | undefined> {
    return this.writer.get(resource, ref, options);
  }

  list<T extends KubeObject>(resource: Resource<T>, options?: ListOptions): Promise<T[]> {
    return this.writer.list(resource, options);
  }

  create<T extends KubeObject>(resource: Resource<T>, object: T, options?: WriteOptions): Promise<T> {
    return this.writer.create(resource, this.labelled(object), options);
  }

  update<T extends KubeObject>(resource: Resource<T>, object: T, options?: WriteOptions): Promise<T> {
    return this.writer.update(resource, this.labelled(object), options);
  }

  patch<T extends KubeObject>(
    resource: Resource<T>,
    ref: ObjectRef,
    patch: Patch,
    options?: WriteOptions,
  ): Promise<T> {
    if (patch.type === "json") return this.writer.patch(resource, ref, patch, options);
    const labelled = this.labelled<Readonly<Record<string, unknown>> & KubeObject>(patch.patch);
    return this.writer.patch(resource, ref, { type: patch.type, patch: labelled }, options);
  }

  apply<T extends KubeObject>(
    resource: Resource<T>,
    object: ApplyConfiguration<T>,
    options: ApplyOptions = {},
  ): Promise<T> {
    const { controller, ...rest } = options;
    // The controller reference first (the writer would add it after us), so the label can follow it.
    const owned = applyConfigurationOwnedBy(resource, object as KubeObject, controller);
    return this.writer.apply(resource, this.labelled(owned) as ApplyConfiguration<T>, rest);
  }

  delete<T extends KubeObject>(
    resource: Resource<T>,
    ref: ObjectRef,
    options?: DeleteOptions,
  ): Promise<boolean> {
    return this.writer.delete(resource, ref, options);
  }

  updateStatus<T extends KubeObject>(resource: Resource<T>, object: T, options?: WriteOptions): Promise<T> {
    return this.writer.updateStatus(resource, object, options);
  }

  applyStatus<T extends KubeObject>(
    resource: Resource<T>,
    object: ApplyConfiguration<T>,
    options?: ApplyOptions,
  ): Promise<T> {
    return this.writer.applyStatus(resource, object, options);
  }

  /** `object` with the owner-slot label its controller owner calls for (a copy), or `object` itself. */
  private labelled<O extends KubeObject>(object: O): O {
    const slot = this.owners.ownerSlot(object);
    if (slot === undefined || object.metadata?.labels?.[OWNER_SLOT_LABEL] === slot) return object;
    return {
      ...object,
      metadata: { ...object.metadata, labels: { ...object.metadata?.labels, [OWNER_SLOT_LABEL]: slot } },
    };
  }
}
