import { isNotFound, type Client, type KubeObject, type Resource } from "@tessera/client";
import type { Logger } from "@tessera/core";
import { OWNER_SLOT_LABEL, ownerSlotLabelValue, type UnlabelledObject } from "@tessera/sharding";
import type { SlotSpace } from "@tessera/sharding/ranges";

/** How many label patches of one found batch are in flight at once: an upgrade's burst stays gentle on the API server. */
const LABELS_IN_FLIGHT = 8;

/**
 * The upgrade path of a sharded controller's owned objects: those found
 * without the owner-slot label (made before sharding or an upgrade, or by
 * someone else) are labelled here with their owner's slot, by a merge patch
 * of that one label. Labelled, an object enters this member's divided cache
 * like any other, and its owner is reconciled from that event, with the
 * child in the cache. So the migration does not depend on the reconciler
 * writing the child again: one that skips unchanged children (get, compare,
 * update only on a difference) would otherwise never label them, and would
 * find them missing from its cache. An object that cannot be labelled (no
 * `patch` permission, a conflict) has its owner queued instead, whose next
 * write of it labels it.
 */
export class OwnerSlotMigration {
  constructor(
    private readonly client: Client,
    private readonly space: SlotSpace,
    private readonly logger: Logger,
    /** Queues the owners of objects that could not be labelled. */
    private readonly queueOwners: (objects: readonly UnlabelledObject[]) => void,
  ) {}

  /** Labels `objects` of `resource`, a few at a time; resolves once each was labelled or its owner queued. */
  async label(resource: Resource<KubeObject>, objects: readonly UnlabelledObject[]): Promise<void> {
    const failed: UnlabelledObject[] = [];
    let labelled = 0;
    let firstError: string | undefined;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < objects.length) {
        const object = objects[next++] as UnlabelledObject;
        try {
          await this.client.patch(
            resource,
            { ...(object.namespace ? { namespace: object.namespace } : {}), name: object.name },
            {
              type: "merge",
              patch: {
                metadata: {
                  labels: { [OWNER_SLOT_LABEL]: ownerSlotLabelValue(object.owner.uid, this.space) },
                },
              },
            },
          );
          labelled++;
        } catch (error) {
          if (isNotFound(error)) continue;
          firstError ??= error instanceof Error ? error.message : String(error);
          failed.push(object);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(LABELS_IN_FLIGHT, objects.length) }, worker));
    this.logger.info("sharded controller: owned objects found without the owner-slot label, labelled", {
      resource: resource.plural,
      labelled,
      failed: failed.length,
    });
    if (failed.length === 0) return;
    this.logger.warn(
      "sharded controller: could not label owned objects with their owner's slot; their owners are queued, and the reconciler's next write of each labels it (grant patch on the kind to label them at once)",
      { resource: resource.plural, objects: failed.length, verb: "patch", error: firstError },
    );
    this.queueOwners(failed);
  }
}
