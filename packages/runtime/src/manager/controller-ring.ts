import type { KubeConfigLike } from "@tessera/client";
import {
  resolveInstrumentation,
  toError,
  withFields,
  type Instrumentation,
  type Logger,
  type Runnable,
} from "@tessera/core";
import { SharedIndexInformer, stripManagedFields } from "@tessera/informers";
import type { LeaderElectionDurations } from "@tessera/leader-election";
import { KubeListerWatcher, type Compression } from "@tessera/reflector";
import { type KubeObject, type Resource } from "@tessera/client";
import {
  createDequeueGuard,
  InFlightReconciles,
  MemberFencedError,
  RingCoordinator,
  ShardedReflector,
  ShardMember,
} from "@tessera/sharding";
import { SlotSpace } from "@tessera/sharding/ranges";

/** Options of a {@link ControllerRing}. */
export interface ControllerRingOptions<T extends KubeObject> extends Instrumentation {
  kubeConfig: KubeConfigLike;
  /** Where the ring's Leases and assignment live. */
  namespace: string;
  ring: string;
  identity: string;
  resource: Resource<T>;
  slots: number;
  durations: LeaderElectionDurations;
  /** Offered on the primary kind's LISTs and WATCHes; default none. */
  compression?: Compression;
  /** The primary kind's wire; default JSON. */
  wire?: "json" | "protobuf";
}

/**
 * The sharding of one controller on this replica: a ring member (its member
 * Lease, the assignment it follows), the ring's coordinator (elected among
 * the members), and the primary kind's informer fed by a sharded reflector
 * that lists and watches only the member's slots with `shardSelector`.
 * `admit` is the dequeue guard for keys of the primary kind (secondary
 * objects are enqueued under their owner's key, so they follow it); `track`
 * records in-flight reconciles by slot, and a handover waits for them before
 * acknowledging, so no object is reconciled by two replicas at once.
 */
export class ControllerRing<T extends KubeObject> implements Runnable {
  readonly informer: SharedIndexInformer<T>;
  readonly member: ShardMember;
  readonly coordinator: RingCoordinator;
  readonly admit: (key: string) => boolean;
  private reflector: ShardedReflector<T> | undefined;
  private readonly inFlight = new InFlightReconciles();
  private readonly space: SlotSpace;
  private readonly logger: Logger;
  private readonly fencedController = new AbortController();

  constructor(private readonly options: ControllerRingOptions<T>) {
    const tools = resolveInstrumentation(options, "@tessera/runtime");
    this.logger = withFields(tools.logger, { ring: options.ring, member: options.identity });
    const instrumentation = {
      clock: tools.clock,
      random: tools.random,
      logger: tools.logger,
      meter: tools.meter,
      tracer: tools.tracer,
    };
    this.space = new SlotSpace(options.slots);
    const lw = new KubeListerWatcher(options.kubeConfig, options.resource, {
      ...(options.compression ? { compression: options.compression } : {}),
      ...(options.wire ? { wire: options.wire } : {}),
      // The cache strips them below; the decoder need not shape them.
      stripManagedFields: true,
    });
    this.informer = new SharedIndexInformer<T>({
      ...instrumentation,
      listerWatcher: lw,
      handle: options.resource,
      transform: stripManagedFields,
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
    this.member.fence.addEventListener(
      "abort",
      () => {
        const reason: unknown = this.member.fence.reason;
        if (reason instanceof MemberFencedError && reason.reason === "renewDeadlineExceeded")
          this.fencedController.abort(reason);
      },
      { once: true },
    );
    this.coordinator = new RingCoordinator({
      ...ring,
      slotCount: options.slots,
      election: options.durations,
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
   * deadline), never on a graceful stop: reconciles in flight must then end
   * at once, before the coordinator may hand the member's slots to others.
   */
  get fenced(): AbortSignal {
    return this.fencedController.signal;
  }

  /** Records the start of a reconcile of `key`; call the result when it ends. */
  track(key: string): () => void {
    const uid = this.informer.lister.getByKey(key)?.metadata?.uid;
    return this.inFlight.begin(uid === undefined ? undefined : this.space.slotOfKey(uid));
  }

  /** Runs the member, the coordinator and the sharded informer until `signal` aborts; the member hands its slots back on the way out. */
  async run(signal: AbortSignal): Promise<void> {
    // The informer outlives the member: leaving the ring evicts the member's
    // objects through the informer's queue, which must still be open then.
    const informerStop = new AbortController();
    let informerError: unknown;
    const informer = this.informer.run(informerStop.signal).catch((error: unknown) => {
      informerError = error;
    });
    try {
      await Promise.all([this.member.run(signal), this.coordinator.run(signal)]);
    } finally {
      informerStop.abort(signal.reason);
      await informer;
    }
    if (informerError !== undefined) throw toError(informerError);
  }

  private async reassign(active: ReadonlySet<number>, lost: ReadonlySet<number>): Promise<void> {
    this.logger.info("sharded controller: slots changed", { slots: active.size, lost: lost.size });
    const ranges = this.reflector?.setSlots(active, this.space);
    // The handover contract: acknowledge (let the slots move) only once our
    // reconciles of them ended. No deadline here: a slot handed over while a
    // reconcile of it runs would be reconciled twice at once; a reconcile is
    // bounded by its controller's reconcileTimeoutMs instead.
    await Promise.all([ranges, this.inFlight.settledFor(lost)]);
  }
}
