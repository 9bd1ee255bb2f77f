import type { Logger } from "@tessera/core";
import type { SharedIndexInformer } from "@tessera/informers";
import { describeResource, type KubeObject, type Resource } from "@tessera/client";
import { expectedOwnerSlot } from "@tessera/sharding";
import type { SlotSpace } from "@tessera/sharding/ranges";
import type { OwnerSlots } from "../client/owner-slot-labels.js";

/** A sharded controller's primary kind: the ring's informer holds this replica's share. */
interface RingCache {
  readonly controller: string;
  readonly informer: SharedIndexInformer<KubeObject>;
}

/**
 * The kinds the manager's sharded controllers divide among replicas, and a
 * warning, once per kind, for any other informer of one of them: an
 * unsharded copy of the kind on every replica (another controller's
 * `owns`/`watches` of it, or a reconciler reading it through
 * `Tokens.InformerFactory`) costs each replica the whole kind, which
 * sharding is there to cut.
 */
export class ShardedKinds implements OwnerSlots {
  private readonly rings = new Map<string, RingCache>();
  /** The sharded kinds by `group/kind`, as owner references name them, with their ring's slots. */
  private readonly owners = new Map<string, { group: string; kind: string; space: SlotSpace }>();
  private readonly warned = new Set<string>();

  constructor(private readonly logger: Logger) {}

  /** Records that `controller`'s ring caches `resource` in `informer`; checks the informers made before it. */
  add(
    resource: Resource,
    controller: string,
    informer: SharedIndexInformer<KubeObject>,
    existing: Iterable<SharedIndexInformer<KubeObject>>,
    space?: SlotSpace,
  ): void {
    this.rings.set(describeResource(resource), { controller, informer });
    if (space)
      this.owners.set(`${resource.group}/${resource.kind}`, {
        group: resource.group,
        kind: resource.kind,
        space,
      });
    for (const other of existing) this.check(other);
  }

  /** The owner-slot label `object` carries: its controller owner's slot, when the owner is of a sharded kind. */
  ownerSlot(object: KubeObject): string | undefined {
    if (this.owners.size === 0) return undefined;
    for (const ref of object.metadata?.ownerReferences ?? []) {
      if (ref.controller !== true) continue;
      const slash = ref.apiVersion.indexOf("/");
      const owner = this.owners.get(`${slash < 0 ? "" : ref.apiVersion.slice(0, slash)}/${ref.kind}`);
      return owner ? expectedOwnerSlot(object, owner, owner.space) : undefined;
    }
    return undefined;
  }

  /** Warns (once per kind) when `informer` caches a kind a ring divides and is not the ring's own. */
  check(informer: SharedIndexInformer<KubeObject>): void {
    const handle = informer.handle;
    if (handle === undefined) return;
    const kind = describeResource(handle);
    const ring = this.rings.get(kind);
    if (ring === undefined || ring.informer === informer || this.warned.has(kind)) return;
    this.warned.add(kind);
    this.logger.warn(
      `a second, unsharded cache of ${kind} runs on this replica: it holds the kind's objects of every slot, while sharded controller "${ring.controller}" caches this replica's share; read ${kind} through Tokens.Client (it serves the ring's share and the indexes declared with for(..., { indexes })), not Tokens.InformerFactory; if another controller declares ${kind} with owns() or watches(), that declaration is the copy`,
      { resource: kind, informer: informer.name, controller: ring.controller },
    );
  }
}
