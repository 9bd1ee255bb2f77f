import type { V1Lease } from "@kubernetes/client-node";
import { isConflict, Leases, type KubeConfigLike } from "@tessera/client";
import {
  resolveInstrumentation,
  sleep,
  type Clock,
  type Instrumentation,
  type Logger,
  type Runnable,
} from "@tessera/core";
import { LeaderElector, LeaseLock, type LeaderElectionDurations } from "@tessera/leader-election";
import { advanceAssignment, emptyAssignment, type Assignment } from "./assignment.js";
import { ConfigMapAssignmentStore, RING_LABEL } from "./assignment-store.js";
import { KubernetesLeaseClient, type LeaseClient } from "./lease-client.js";
import { MemberTracker } from "./member-tracker.js";
import { WatchedObjects } from "./watched-objects.js";
import { ringParticipants } from "./ring-participants.js";
import { CoordinatorMetrics } from "./sharding-metrics.js";
import { DEFAULT_SLOT_COUNT, SlotSpace } from "./slot-space.js";

/**
 * Options for {@link RingCoordinator}. Its instrumentation (clock, random,
 * logger, meter) also drives the coordinator election.
 */
export interface RingCoordinatorOptions extends Instrumentation {
  kubeConfig: KubeConfigLike;
  /** Namespace of the ring's Leases and assignment ConfigMap. */
  namespace: string;
  /** The ring's name; the coordinator Lease is named after it. */
  ring: string;
  /** This replica's identity (its member identity). */
  identity: string;
  /** Slots in the ring, a power of two; default 256. Checked at construction. */
  slotCount?: number;
  /** How often the leader re-reads the member Leases and the assignment; default 500 ms. */
  pollIntervalMs?: number;
  /** Wait past a member Lease's duration before its slots move; default 2 000 ms. */
  expiryMarginMs?: number;
  /**
   * Durations of the coordinator election: client-go's lease 15 s and renew
   * deadline 10 s, but a 1 s retry period by default, so that a candidate
   * notices a dead coordinator's last renewal sooner and takes over closer
   * to the lease's expiry.
   */
  election?: Partial<LeaderElectionDurations>;
  /** Where member Leases are read; default the namespace's Leases through `kubeConfig`. */
  leases?: LeaseClient;
  /** Where the assignment is published; default `ConfigMap <namespace>/<ring>-assignment`. */
  store?: ConfigMapAssignmentStore;
}

/**
 * The coordinator of a ring: whichever replica wins the leader election on
 * the ring's Lease (`<ring>`) watches the member Leases, computes the next
 * assignment with {@link advanceAssignment} and publishes it. It keeps no
 * state of its own: a new leader reads the published assignment and carries
 * on. Every replica runs one; only the leader acts.
 */
export class RingCoordinator implements Runnable {
  readonly elector: LeaderElector;
  private readonly leases: LeaseClient;
  private readonly store: ConfigMapAssignmentStore;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly pollIntervalMs: number;
  private readonly marginMs: number;
  private readonly slotCount: number;
  private readonly fields: Record<string, unknown>;
  private readonly metrics: CoordinatorMetrics;
  private readonly tracker: MemberTracker;
  private readonly memberSelector: string;
  private waitingReported = "";
  /** How the leader keeps the member Leases: by a watch, unless a LeaseClient was given (tests). */
  private readonly watchLeases: (() => WatchedObjects<V1Lease>) | undefined;
  private watchedLeases: WatchedObjects<V1Lease> | undefined;

  /** @throws SlotCountError for a slot count that is not a power of two in [1, 65536] */
  constructor(options: RingCoordinatorOptions) {
    this.slotCount = new SlotSpace(options.slotCount ?? DEFAULT_SLOT_COUNT).slotCount;
    const tools = resolveInstrumentation(options, "@tessera/sharding");
    this.clock = tools.clock;
    this.logger = tools.logger;
    this.pollIntervalMs = options.pollIntervalMs ?? 500;
    this.marginMs = options.expiryMarginMs ?? 2_000;
    this.leases =
      options.leases ??
      new KubernetesLeaseClient(options.kubeConfig, options.namespace, { meter: tools.meter });
    this.watchLeases = options.leases
      ? undefined
      : () =>
          new WatchedObjects(Leases, {
            ...tools,
            kubeConfig: options.kubeConfig,
            namespace: options.namespace,
            labelSelector: `${RING_LABEL}=${options.ring}`,
            name: `ring ${options.ring} member leases`,
          });
    this.store =
      options.store ??
      new ConfigMapAssignmentStore({
        kubeConfig: options.kubeConfig,
        namespace: options.namespace,
        ring: options.ring,
        meter: tools.meter,
      });
    this.fields = { ring: options.ring, identity: options.identity };
    this.metrics = new CoordinatorMetrics(tools.meter, options.ring);
    this.tracker = new MemberTracker(this.clock, this.marginMs);
    this.memberSelector = `${RING_LABEL}=${options.ring}`;
    this.elector = new LeaderElector({
      retryPeriodMs: 1_000,
      ...options.election,
      lock: new LeaseLock({
        kubeConfig: options.kubeConfig,
        namespace: options.namespace,
        name: options.ring,
        identity: options.identity,
        meter: tools.meter,
      }),
      callbacks: { onStartedLeading: (signal) => this.coordinate(signal) },
      clock: tools.clock,
      logger: tools.logger,
      random: tools.random,
      meter: tools.meter,
      name: `${options.ring} coordinator`,
    });
  }

  /** Whether this replica coordinates right now. */
  get isLeader(): boolean {
    return this.elector.isLeader;
  }

  /**
   * Campaigns, coordinates while leading, and campaigns again after losing,
   * until `signal` aborts. While leading it watches the member Leases; while
   * not, it still lists them every half lease duration, so that on taking
   * over it already knows
   * which members stopped renewing and when: a member that crashed together
   * with the old coordinator is given up leaseDuration + margin after its last
   * renewal, not after the takeover. Resolves once stopped: the ring Lease
   * handed back if it led, the member Leases no longer watched.
   */
  async run(signal: AbortSignal): Promise<void> {
    const watching = this.watchWhileFollowing(signal);
    while (!signal.aborted) {
      await this.elector.run(signal);
      if (!signal.aborted) await sleep(this.clock, this.elector.durations.retryPeriodMs, signal);
    }
    await watching;
  }

  private async watchWhileFollowing(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      if (!this.elector.isLeader) {
        try {
          this.tracker.observe(await this.leases.list(this.memberSelector));
        } catch (err) {
          this.logger.debug("could not list member leases", {
            ...this.fields,
            error: err instanceof Error ? err.message : String(err),
          });
        }
      }
      // Half a lease duration, not every retry period: every replica follows, so this listing is
      // paid once per member. A renewal seen late only makes a member look fresher: safe, and
      // the leader lists afresh each step anyway.
      await sleep(this.clock, this.elector.durations.leaseDurationMs / 2, signal);
    }
  }

  private async coordinate(signal: AbortSignal): Promise<void> {
    this.logger.info("coordinating ring", this.fields);
    const tracker = this.tracker;
    // While leading, the member Leases come by a watch: each renewal once, instead of every
    // Lease at every step. Until it has synced (or if it fails) the step lists them.
    const watched = this.watchLeases?.();
    this.watchedLeases = watched;
    const watching = watched?.run(signal).catch((err: unknown) => {
      this.logger.warn("the member lease watch stopped; listing them each step", {
        ...this.fields,
        error: err instanceof Error ? err.message : String(err),
      });
    });
    try {
      while (!signal.aborted) {
        try {
          await this.step(tracker, signal);
        } catch (err) {
          this.logger.warn("coordination step failed; retrying", {
            ...this.fields,
            error: err instanceof Error ? err.message : String(err),
          });
        }
        await sleep(this.clock, this.pollIntervalMs, signal);
      }
    } finally {
      this.watchedLeases = undefined;
      await watching;
    }
  }

  /** One round: observe members, advance the assignment as far as it goes, publish each epoch. */
  private async step(tracker: MemberTracker, signal: AbortSignal): Promise<void> {
    const watched = this.watchedLeases;
    let leases: readonly V1Lease[] | undefined;
    if (watched?.hasSynced()) {
      // The watch's copy stops moving while the watch is down (a kube-apiserver restart, then
      // the reflector's backoff): it may show members renewing or acknowledging, but a member
      // that seems to have left is confirmed by a fresh listing first.
      leases = watched.list();
      tracker.observe(leases, { complete: false });
      if (tracker.losesMembers(leases)) leases = undefined;
    }
    if (!leases) {
      leases = await this.leases.list(this.memberSelector);
      tracker.observe(leases);
    }
    await this.deleteLeftBehind(tracker.leftBehind(leases));
    let read = await this.store.read();
    if (!read) {
      const empty = emptyAssignment(this.slotCount);
      read = { assignment: empty, version: await this.store.create(empty) };
    }
    if (read.assignment.owners.length !== this.slotCount) {
      throw new Error(
        `${this.store.describe()} has ${read.assignment.owners.length} slots but this coordinator was configured ` +
          `with ${this.slotCount}; the slot count of a ring cannot change`,
      );
    }
    const view = tracker.view();
    this.reportWaiting(ringParticipants(read.assignment, view.members).waiting);
    const next: Assignment | undefined = advanceAssignment(read.assignment, view);
    if (!next || signal.aborted) return;
    await this.store.replace(next, read.version);
    const prev = read.assignment.owners;
    this.metrics.publishedEpoch(
      next.owners.filter((o, i) => o !== undefined && prev[i] !== undefined && prev[i] !== o).length,
    );
    this.logger.info("published assignment", {
      ...this.fields,
      epoch: next.epoch,
      members: tracker.liveMembers(),
      releasing: next.releasing.size,
    });
  }

  /**
   * Deletes member Leases nobody holds any more: every member and every
   * follower lists the ring's Leases, so each one left behind by a member
   * that left or crashed would cost every listing its bytes for good. The
   * precondition leaves alone a Lease written meanwhile (a member rejoining
   * under the same identity).
   */
  private async deleteLeftBehind(
    left: ReadonlyArray<{ name: string; resourceVersion: string }>,
  ): Promise<void> {
    for (const { name, resourceVersion } of left) {
      try {
        await this.leases.delete(name, resourceVersion);
        this.logger.debug("deleted a member lease left behind", { ...this.fields, lease: name });
      } catch (err) {
        if (isConflict(err)) continue;
        this.logger.debug("could not delete a member lease left behind", {
          ...this.fields,
          lease: name,
          error: err instanceof Error ? err.message : String(err),
        });
      }
    }
  }

  /** Logs when the set of members left without slots (more members than slots) changes. */
  private reportWaiting(waiting: readonly string[]): void {
    const key = waiting.join(",");
    if (key === this.waitingReported) return;
    this.waitingReported = key;
    if (waiting.length === 0) return;
    this.logger.error("more ring members than slots: some members get no slots", {
      ...this.fields,
      slotCount: this.slotCount,
      waiting,
      fix: `scale the ring down to at most ${this.slotCount} members, or recreate the ring with a larger power-of-two slotCount`,
    });
  }
}
