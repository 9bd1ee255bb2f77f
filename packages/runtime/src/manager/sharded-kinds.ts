import type { Logger } from "@tessera/core";
import type { SharedIndexInformer } from "@tessera/informers";
import { describeResource, type KubeObject, type Resource } from "@tessera/client";

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
export class ShardedKinds {
  private readonly rings = new Map<string, RingCache>();
  private readonly warned = new Set<string>();

  constructor(private readonly logger: Logger) {}

  /** Records that `controller`'s ring caches `resource` in `informer`; checks the informers made before it. */
  add(
    resource: Resource,
    controller: string,
    informer: SharedIndexInformer<KubeObject>,
    existing: Iterable<SharedIndexInformer<KubeObject>>,
  ): void {
    this.rings.set(describeResource(resource), { controller, informer });
    for (const other of existing) this.check(other);
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
