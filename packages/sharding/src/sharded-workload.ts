import {
  resolveInstrumentation,
  toError,
  withFields,
  type Instrumentation,
  type Logger,
  type ResolvedInstrumentation,
  type Runnable,
} from "@tessera/core";
import {
  MetadataListerWatcher,
  SharedIndexInformer,
  composeTransforms,
  stripManagedFields,
  type CompactCacheOptions,
  type Transform,
} from "@tessera/informers";
import type { LeaderElectionDurations } from "@tessera/leader-election";
import {
  DEFAULT_PAGE_SIZE,
  KubeListerWatcher,
  listAllPages,
  type Compression,
  type Indexers,
} from "@tessera/reflector";
import type { KubeConfigLike, KubeObject, Resource } from "@tessera/client";
import { createDequeueGuard } from "./dequeue-guard.js";
import { InFlightReconciles } from "./in-flight-reconciles.js";
import { MemberFencedError } from "./member-lease.js";
import { RingCoordinator } from "./ring-coordinator.js";
import { controllerOwnerOf, type OwnerReferenceLike } from "./owner-routing.js";
import { groupOf, slotsOfRange, OwnerSlotListerWatcher, unlabelledSelector } from "./owner-slot-label.js";
import { ShardedReflector } from "./sharded-reflector.js";
import { ShardMember } from "./shard-member.js";
import { DEFAULT_SLOT_COUNT, SlotSpace } from "./slot-space.js";
import { unlabelledLookNamespaces } from "./unlabelled-look.js";

/** An owned object found without the owner-slot label, with its controller owner (of the sharded kind, in this member's slots). */
export interface UnlabelledObject {
  readonly namespace: string | undefined;
  readonly name: string;
  readonly owner: OwnerReferenceLike & { name: string; uid: string };
}

/** One owned kind's divided cache. */
interface OwnedKind {
  informer: SharedIndexInformer<KubeObject>;
  reflector?: ShardedReflector<KubeObject>;
  resource: Resource;
  /** The one namespace the cache holds; absent: all. */
  namespace: string | undefined;
  labelSelector: string | undefined;
  fieldSelector: string | undefined;
  onUnlabelled: ((objects: readonly UnlabelledObject[]) => void) | undefined;
}

/** Options of a {@link ShardedWorkload}. */
export interface ShardedWorkloadOptions<T extends KubeObject> extends Instrumentation {
  kubeConfig: KubeConfigLike;
  /** Where the ring's Leases and assignment ConfigMap live. */
  namespace: string;
  /** The ring's name: the coordinator's Lease, and the prefix of the member Leases and the assignment. */
  ring: string;
  /** This replica's name in the ring (a Pod name); unique among the members. */
  identity: string;
  /** The kind whose objects are sharded: the workload caches the member's slots of it. */
  resource: Resource<T>;
  /** Slots of the ring, a power of two fixed for the ring's life; default 256. */
  slots?: number;
  /** Lease timings of the member and the coordinator; default leader-election's (15 s, 10 s, 2 s). */
  durations?: Partial<LeaderElectionDurations>;
  /** Offered on the kind's LISTs and WATCHes; default none. */
  compression?: Compression;
  /** The kind's wire; default JSON. */
  wire?: "json" | "protobuf";
  /**
   * Narrows the member's cache beyond its slots: the server filters by
   * these as well as by the member's shard. Default: every object of the
   * member's slots, managedFields dropped.
   */
  cache?: {
    /** One namespace; absent: all. */
    namespace?: string;
    labelSelector?: string;
    fieldSelector?: string;
    /** Applied after managedFields are dropped. */
    transform?: Transform<T>;
    indexers?: Indexers<T>;
    /** Keep the cached objects compact (see `SharedIndexInformer`'s option); default false. */
    compact?: boolean | CompactCacheOptions;
  };
}

/**
 * One replica's share of a sharded workload, composed safely: a ring member
 * (its member Lease, the assignment it follows), the ring's coordinator
 * (elected among the members), and an informer of the kind fed by a
 * sharded reflector that lists and watches only the member's slots.
 *
 * Feed work to a queue from {@link ShardedWorkload.informer}, and:
 *
 * - ask {@link ShardedWorkload.admit} before queueing and again at dequeue:
 *   a key whose object is outside the member's slots (now) is dropped, so a
 *   slot lost while its keys wait is not worked on;
 * - call {@link ShardedWorkload.track} when work on a key starts, and the
 *   function it returns when it ends: a handover waits for the work in
 *   flight on the lost slots before acknowledging, so no object is worked
 *   on by two replicas at once;
 * - stop work at once when {@link ShardedWorkload.fenced} aborts (the
 *   member could not renew its Lease in time, so its slots may move soon).
 *
 * Secondary objects keyed by their owner (`secondaryShardKey`) follow it
 * through the same guard.
 */
export class ShardedWorkload<T extends KubeObject> implements Runnable {
  /** The kind's objects in this member's slots. */
  readonly informer: SharedIndexInformer<T>;
  readonly member: ShardMember;
  readonly coordinator: RingCoordinator;
  /** The dequeue guard: true when `key`'s object is in a slot this member holds now. */
  readonly admit: (key: string) => boolean;
  private reflector: ShardedReflector<T> | undefined;
  /** The owned kinds' informers, divided by the owner-slot label; their reflectors follow the primary's slots. */
  private readonly owned: OwnedKind[] = [];
  /** Whether the one LIST of unlabelled owned objects was made (after the first slots synced). */
  private migrationStarted = false;
  private runSignal: AbortSignal | undefined;
  private readonly options: ShardedWorkloadOptions<T>;
  private readonly instrumentation: ResolvedInstrumentation;
  private readonly inFlight = new InFlightReconciles();
  /** The ring's slot space (its slot count). */
  readonly space: SlotSpace;
  private readonly logger: Logger;
  private readonly fencedController = new AbortController();

  constructor(options: ShardedWorkloadOptions<T>) {
    const instrumentation = resolveInstrumentation(options, "@tessera/sharding");
    this.options = options;
    this.instrumentation = instrumentation;
    this.logger = withFields(instrumentation.logger, { ring: options.ring, member: options.identity });
    this.space = new SlotSpace(options.slots ?? DEFAULT_SLOT_COUNT);
    this.informer = this.shardedInformer(options, instrumentation);
    const ring = {
      ...instrumentation,
      kubeConfig: options.kubeConfig,
      namespace: options.namespace,
      ring: options.ring,
      identity: options.identity,
    };
    this.member = new ShardMember({
      ...ring,
      ...options.durations,
      onAssignment: ({ active, lost }) => this.reassign(active, lost),
      // Published on the member Lease for `tessera shards`.
      report: () => ({
        objectsCached: this.informer.lister.size,
        ...(this.reflector?.serverFiltering !== undefined
          ? { serverFiltering: this.reflector.serverFiltering }
          : {}),
      }),
    });
    this.member.fence.addEventListener("abort", () => this.onFence(), { once: true });
    this.coordinator = new RingCoordinator({
      ...ring,
      slotCount: this.space.slotCount,
      ...(options.durations ? { election: options.durations } : {}),
    });
    this.admit = createDequeueGuard({
      space: this.space,
      field: "object.metadata.uid",
      ownedSlots: () => this.member.activeSlots,
      lookup: (key) => this.informer.lister.getByKey(key),
    });
  }

  /**
   * Aborts when the member fences itself (a renewal missed past the renew
   * deadline), never on a graceful stop: work in flight must then end at
   * once, before the coordinator may hand the member's slots to others.
   */
  get fenced(): AbortSignal {
    return this.fencedController.signal;
  }

  /** The informers of the owned kinds ({@link ShardedWorkload.ownedInformer}), in the order made. */
  get ownedInformers(): readonly SharedIndexInformer<KubeObject>[] {
    return this.owned.map((o) => o.informer);
  }

  /** Records the start of work on `key`; call the result when it ends. */
  track(key: string): () => void {
    const uid = this.informer.lister.getByKey(key)?.metadata?.uid;
    return this.inFlight.begin(uid === undefined ? undefined : this.space.slotOfKey(uid));
  }

  /** Runs the member, the coordinator and the sharded informer until `signal` aborts; the member hands its slots back on the way out. */
  async run(signal: AbortSignal): Promise<void> {
    // The informer outlives the member: leaving the ring evicts the member's
    // objects through the informer's queue, which must still be open then.
    const informerStop = new AbortController();
    this.runSignal = signal;
    let informerError: unknown;
    const informer = Promise.all(
      [this.informer, ...this.owned.map((o) => o.informer)].map((i) =>
        i.run(informerStop.signal).catch((error: unknown) => {
          informerError ??= error;
        }),
      ),
    );
    try {
      await Promise.all([this.member.run(signal), this.coordinator.run(signal)]);
    } finally {
      informerStop.abort(signal.reason);
      await informer;
    }
    if (informerError !== undefined) throw toError(informerError);
  }

  /**
   * A cache of `resource`, a kind the sharded kind owns, divided like the
   * primary: it holds only the objects whose owner-slot label
   * (`OWNER_SLOT_LABEL`, written by the manager's client) names a slot this
   * member holds. One reflector per run of adjacent slots, each selecting
   * `sharding.tessera.dev/owner-slot in (...)`, so the server filters; a
   * gained run is listed and watched, a lost one stopped and evicted, a kept
   * one never relisted, and a handover acknowledges only once the primary's
   * and every owned kind's lost slots are evicted. Call before `run`.
   */
  ownedInformer<O extends KubeObject>(
    resource: Resource<O>,
    cache: NonNullable<ShardedWorkloadOptions<O>["cache"]> = {},
    onUnlabelled?: (objects: readonly UnlabelledObject[]) => void,
  ): SharedIndexInformer<O> {
    const options = this.options;
    const base = cache.labelSelector;
    const lw = new KubeListerWatcher(options.kubeConfig, resource, {
      ...(cache.namespace ? { namespace: cache.namespace } : {}),
      ...(cache.fieldSelector ? { fieldSelector: cache.fieldSelector } : {}),
      ...(options.compression ? { compression: options.compression } : {}),
      ...(options.wire ? { wire: options.wire } : {}),
      stripManagedFields: true,
    });
    const entry: OwnedKind = {
      informer: undefined as unknown as SharedIndexInformer<KubeObject>,
      resource,
      namespace: cache.namespace || undefined,
      labelSelector: base,
      fieldSelector: cache.fieldSelector || undefined,
      onUnlabelled,
    };
    const informer = new SharedIndexInformer<O>({
      ...this.instrumentation,
      listerWatcher: lw,
      handle: resource,
      cache: "ring",
      transform: cache.transform
        ? composeTransforms(stripManagedFields, cache.transform)
        : stripManagedFields,
      ...(cache.indexers ? { indexers: cache.indexers } : {}),
      ...(cache.compact ? { compact: cache.compact } : {}),
      source: (store) => {
        const reflector = new ShardedReflector<O>({
          ...this.instrumentation,
          listerWatcher: lw,
          store,
          ring: options.ring,
          member: options.identity,
          probe: false,
          scope: (range, inner) => new OwnerSlotListerWatcher(inner, slotsOfRange(range, this.space), base),
          reflector: { transform: stripManagedFields },
        });
        entry.reflector = reflector as unknown as ShardedReflector<KubeObject>;
        // Slots held already (an informer made after the first assignment) are watched at once.
        if (this.member.activeSlots.size > 0) void reflector.setSlots(this.member.activeSlots, this.space);
        return reflector;
      },
    });
    entry.informer = informer as unknown as SharedIndexInformer<KubeObject>;
    this.owned.push(entry);
    return informer;
  }

  private shardedInformer(
    options: ShardedWorkloadOptions<T>,
    instrumentation: ResolvedInstrumentation,
  ): SharedIndexInformer<T> {
    const cache = options.cache ?? {};
    const lw = new KubeListerWatcher(options.kubeConfig, options.resource, {
      ...(cache.namespace ? { namespace: cache.namespace } : {}),
      ...(cache.labelSelector ? { labelSelector: cache.labelSelector } : {}),
      ...(cache.fieldSelector ? { fieldSelector: cache.fieldSelector } : {}),
      ...(options.compression ? { compression: options.compression } : {}),
      ...(options.wire ? { wire: options.wire } : {}),
      // The cache strips them below; the decoder need not shape them.
      stripManagedFields: true,
    });
    return new SharedIndexInformer<T>({
      ...instrumentation,
      listerWatcher: lw,
      handle: options.resource,
      // Apart in metrics from a factory's informer of the same kind on this replica.
      cache: "ring",
      transform: cache.transform
        ? composeTransforms(stripManagedFields, cache.transform)
        : stripManagedFields,
      ...(cache.indexers ? { indexers: cache.indexers } : {}),
      source: (store) =>
        (this.reflector = new ShardedReflector<T>({
          ...instrumentation,
          listerWatcher: lw,
          store,
          ring: options.ring,
          member: options.identity,
          reflector: { transform: stripManagedFields },
        })),
    });
  }

  private onFence(): void {
    const reason: unknown = this.member.fence.reason;
    if (reason instanceof MemberFencedError && reason.reason === "renewDeadlineExceeded")
      this.fencedController.abort(reason);
  }

  private async reassign(active: ReadonlySet<number>, lost: ReadonlySet<number>): Promise<void> {
    this.logger.info("sharded controller: slots changed", { slots: active.size, lost: lost.size });
    const ranges = [this.reflector, ...this.owned.map((o) => o.reflector)].map((r) =>
      r?.setSlots(active, this.space),
    );
    // The handover contract: acknowledge (let the slots move) only once our
    // work on them ended. No deadline here: a slot handed over while work on
    // it runs would be worked on twice at once; the work is bounded by its
    // owner instead (a controller's reconcileTimeoutMs).
    await Promise.all([...ranges, this.inFlight.settledFor(lost)]);
    if (!this.migrationStarted && active.size > 0 && this.owned.some((o) => o.onUnlabelled)) {
      this.migrationStarted = true;
      void this.findUnlabelled();
    }
  }

  /**
   * Once per run, after the member's first slots synced: a metadata-only,
   * paged LIST of each owned kind's objects without the owner-slot label
   * (made before an upgrade, or by someone else), only where a child of the
   * member's owners can be: in the namespaces of the owners it caches (see
   * `unlabelledLookNamespaces`: one LIST per namespace, all namespaces past
   * `UNLABELLED_NAMESPACE_LIMIT` or for a cluster-scoped owner). Those whose
   * controller owner is of the sharded kind and in this member's slots now
   * are handed to the kind's `onUnlabelled` (the runtime labels them with
   * their owner's slot, or queues the owners of those it cannot label). Objects of other members' slots
   * are theirs to find; an owner cached later (created, or in a slot gained
   * later) is reconciled anyway; a failed LIST is logged, not retried.
   */
  private async findUnlabelled(): Promise<void> {
    const signal = this.runSignal;
    if (!(await this.reflector?.waitForSync(signal))) return;
    if (!(await this.informer.waitForSync(signal))) return;
    const kind = { group: this.options.resource.group, kind: this.options.resource.kind };
    const ownerNamespaces = new Set(this.informer.lister.list().map((o) => o.metadata?.namespace));
    for (const owned of this.owned) {
      if (!owned.onUnlabelled) continue;
      const namespaces = unlabelledLookNamespaces({
        ownerScope: this.options.resource.scope,
        ownedScope: owned.resource.scope,
        cacheNamespace: owned.namespace,
        ownerNamespaces,
      });
      try {
        const found: UnlabelledObject[] = [];
        let total = 0;
        let lists = 0;
        for (const namespace of namespaces) {
          const lw = new MetadataListerWatcher(this.options.kubeConfig, owned.resource, {
            ...(namespace ? { namespace } : {}),
            ...(owned.fieldSelector ? { fieldSelector: owned.fieldSelector } : {}),
          });
          const listed = await listAllPages(
            lw,
            { labelSelector: unlabelledSelector(owned.labelSelector) },
            DEFAULT_PAGE_SIZE,
            signal,
            (items) => {
              for (const object of items) {
                total++;
                const owner = controllerOwnerOf(object);
                if (owner?.uid === undefined || owner.name === undefined) continue;
                if (owner.kind !== kind.kind || groupOf(owner.apiVersion) !== kind.group) continue;
                if (!this.member.activeSlots.has(this.space.slotOfKey(owner.uid))) continue;
                found.push({
                  namespace: object.metadata?.namespace,
                  name: object.metadata?.name ?? "",
                  owner: { ...owner, name: owner.name, uid: owner.uid },
                });
              }
              return [];
            },
          );
          lists += listed.pages;
        }
        this.logger.info("sharded controller: owned objects without the owner-slot label, found once", {
          resource: owned.informer.resource,
          // How many namespaces were listed one by one, or "all".
          namespaces: namespaces.includes(undefined) ? "all" : namespaces.length,
          lists,
          unlabelled: total,
          ownedHere: found.length,
        });
        if (found.length > 0) owned.onUnlabelled(found);
      } catch (error) {
        if (signal?.aborted) return;
        this.logger.warn(
          "sharded controller: the LIST of owned objects without the owner-slot label failed",
          {
            resource: owned.informer.resource,
            error: toError(error).message,
          },
        );
      }
    }
  }
}
