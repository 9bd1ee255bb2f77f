import type { KubeConfigLike } from "@tessera/client";
import {
  resolveInstrumentation,
  sleep,
  whenAborted,
  type Clock,
  type Instrumentation,
  type Logger,
  type ResolvedInstrumentation,
  type Runnable,
} from "@tessera/core";
import type { LeaderElectionDurations } from "@tessera/leader-election";
import { activeSlotsOf } from "./assignment.js";
import { ConfigMapAssignmentStore, type VersionedAssignment } from "./assignment-store.js";
import { KubernetesLeaseClient, type LeaseClient } from "./lease-client.js";
import { MemberLease, type MemberReport } from "./member-lease.js";
import { Milestone } from "./milestone.js";
import { MemberMetrics } from "./sharding-metrics.js";
import { SlotSpace } from "./slot-space.js";

/** Where a member reads the published assignment; {@link ConfigMapAssignmentStore} is one. */
export interface AssignmentReader {
  read(): Promise<VersionedAssignment | undefined>;
  /** Run for as long as the member follows, when given: e.g. a watch that keeps `read` answering without a request. */
  run?(signal: AbortSignal): Promise<void>;
}

/** A change of the slots a member may work on, handed to {@link ShardMemberOptions.onAssignment}. */
export interface SlotChange {
  /** The epoch being applied. */
  readonly epoch: number;
  /** The slots the member may work on from now on. */
  readonly active: ReadonlySet<number>;
  /** Slots just granted. */
  readonly gained: ReadonlySet<number>;
  /** Slots just taken away (being released or gone): finish their in-flight work, drop their keys. */
  readonly lost: ReadonlySet<number>;
}

/** Options for {@link ShardMember}. */
export interface ShardMemberOptions extends Partial<LeaderElectionDurations>, Instrumentation {
  kubeConfig: KubeConfigLike;
  namespace: string;
  ring: string;
  /** Unique in the ring, e.g. the pod name. */
  identity: string;
  /** How often the published assignment is read; default 500 ms. */
  pollIntervalMs?: number;
  /**
   * Called when the member's slots change, after {@link ShardMember.activeSlots}
   * already excludes the lost ones (so nothing new starts on them). Resolve
   * once in-flight work on the lost slots has finished: only then does the
   * member acknowledge the epoch and let the slots move on. Also called when
   * the run stops, with every slot lost, before the Lease is handed back.
   */
  onAssignment?: (change: SlotChange) => void | Promise<void>;
  /** Where the member Lease lives; default the namespace's Leases through `kubeConfig`. */
  leases?: LeaseClient;
  /** Where the assignment is read; default `ConfigMap <namespace>/<ring>-assignment`, watched while the member follows. */
  store?: AssignmentReader;
  /** What the member publishes about itself on its Lease at each renewal (objects cached, server filtering). */
  report?: () => MemberReport;
}

/**
 * One member of a ring: holds its member Lease, follows the published
 * assignment, and acknowledges each epoch once it has let go of what it lost.
 * {@link ShardMember.activeSlots} is what the dequeue guard should consult.
 *
 * {@link ShardMember.run} is the member's life: it joins, follows, and leaves
 * gracefully when its signal aborts. {@link ShardMember.joined} tells when it
 * has joined.
 *
 * When the Lease cannot be renewed in time the member fences itself:
 * {@link ShardMember.activeSlots} becomes empty at once and
 * {@link ShardMember.fence} aborts; it never works again (exit the process,
 * or run a member with a new identity).
 *
 * ```ts
 * const member = new ShardMember({ kubeConfig, namespace, ring, identity, onAssignment });
 * const running = member.run(stop.signal); // rejects if the member Lease cannot be taken
 * if (await member.joined()) console.log("joined the ring");
 * stop.abort(); // leave: every slot let go of, then the Lease handed back
 * await running;
 * ```
 */
export class ShardMember implements Runnable {
  readonly lease: MemberLease;
  readonly identity: string;
  private readonly ring: string;
  private readonly store: AssignmentReader;
  private readonly tools: ResolvedInstrumentation;
  private ranges = 0;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly pollIntervalMs: number;
  private readonly onAssignment: ShardMemberOptions["onAssignment"];
  private active: ReadonlySet<number> = new Set();
  private applied: number | undefined;
  private ran = false;
  private readonly joining = new Milestone();

  constructor(options: ShardMemberOptions) {
    this.identity = options.identity;
    this.ring = options.ring;
    this.tools = resolveInstrumentation(options, "@tessera/sharding");
    this.clock = this.tools.clock;
    this.logger = this.tools.logger;
    this.pollIntervalMs = options.pollIntervalMs ?? 500;
    this.onAssignment = options.onAssignment;
    this.store =
      options.store ??
      new ConfigMapAssignmentStore({
        ...this.tools,
        kubeConfig: options.kubeConfig,
        namespace: options.namespace,
        ring: options.ring,
      });
    this.lease = new MemberLease({
      ...options,
      client:
        options.leases ??
        new KubernetesLeaseClient(options.kubeConfig, options.namespace, { meter: this.tools.meter }),
      ...this.tools,
    });
    this.lease.fence.addEventListener("abort", () => {
      if (this.active.size > 0) {
        this.logger.warn("member fenced; dropping all slots", {
          identity: this.identity,
          slots: this.active.size,
        });
      }
      this.active = new Set();
    });
  }

  /** The slots this member may start work on now; empty once fenced or stopped. */
  get activeSlots(): ReadonlySet<number> {
    return this.active;
  }

  /** The last epoch applied (and acknowledged). */
  get epoch(): number | undefined {
    return this.applied;
  }

  /** Aborted when the member must stop all work: fenced, or its run ended. */
  get fence(): AbortSignal {
    return this.lease.fence;
  }

  /**
   * The member's life in the ring, until `signal` aborts:
   *
   * 1. joins: takes the member Lease (and keeps renewing it), retrying
   *    while the failure may pass (an apiserver restarting); if the Lease
   *    is refused for good (403, 422), the run rejects with that
   *    `ApiError`;
   * 2. follows the published assignment, every `pollIntervalMs`: each new
   *    epoch goes through `onAssignment` and is acknowledged once it resolved;
   * 3. once `signal` aborts, leaves gracefully: gives up every slot (one more
   *    `onAssignment`, all slots lost, awaited), then hands the Lease back so
   *    the coordinator moves the slots at once; unregisters its metrics; and
   *    resolves. If that last `onAssignment` rejects, the Lease is handed
   *    back all the same and the run rejects with its error.
   *
   * A fenced member stops following at once and only waits for `signal`.
   * A member joins once: a second run rejects.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.ran) {
      throw new Error(
        `ring ${this.ring} member ${this.identity}: run() was already called; a member joins once (make a new ShardMember)`,
      );
    }
    this.ran = true;
    if (signal.aborted) {
      this.joining.miss();
      return;
    }
    const metrics = new MemberMetrics(this.tools.meter, this.ring, this.identity, () => ({
      slots: this.active.size,
      ranges: this.active.size === 0 ? 0 : this.ranges,
      epoch: this.applied,
      fenced: this.fence.aborted,
    }));
    // The Lease is held until the slots are let go of, so it outlives `signal` by a little.
    const leaving = new AbortController();
    const holding = this.lease.run(leaving.signal);
    let letGoFailure: { error: unknown } | undefined;
    try {
      if (await this.lease.acquired()) {
        const following = this.follow(AbortSignal.any([signal, this.fence]));
        this.joining.reach();
        await following;
        await whenAborted(signal);
        letGoFailure = await this.letGo();
      }
    } finally {
      this.joining.miss();
      leaving.abort();
      try {
        await holding;
      } finally {
        metrics.close();
      }
    }
    if (letGoFailure) throw letGoFailure.error;
  }

  /**
   * Resolves `true` once {@link ShardMember.run} has joined the ring (holds
   * its member Lease and follows the assignment; at once if it did already),
   * `false` if the run ended without joining (then the run rejects with why)
   * or `signal` aborts first. Never rejects. Wait for it before relying on
   * {@link ShardMember.activeSlots} or the member Lease being there.
   */
  joined(signal?: AbortSignal): Promise<boolean> {
    return this.joining.wait(signal);
  }

  private async follow(until: AbortSignal): Promise<void> {
    const watching = this.store.run?.(until).catch((err: unknown) => {
      // Reads fall back to a GET each poll: slower to hear of an epoch, never wrong.
      this.logger.warn("the assignment watch stopped; reading it by polling", {
        identity: this.identity,
        error: err instanceof Error ? err.message : String(err),
      });
    });
    try {
      while (!until.aborted) {
        try {
          await this.applyLatest(until);
        } catch (err) {
          this.logger.warn("could not apply the assignment; retrying", {
            identity: this.identity,
            error: err instanceof Error ? err.message : String(err),
          });
        }
        await sleep(this.clock, this.pollIntervalMs, until);
      }
    } finally {
      await watching;
    }
  }

  /** Gives up every slot through `onAssignment`; its failure is returned, to be thrown after the Lease is back. */
  private async letGo(): Promise<{ error: unknown } | undefined> {
    const lost = this.active;
    this.active = new Set();
    if (lost.size === 0 || this.fence.aborted) return undefined;
    try {
      await this.onAssignment?.({ epoch: this.applied ?? 0, active: this.active, gained: new Set(), lost });
      return undefined;
    } catch (error) {
      this.logger.error("could not let go of the slots on leaving; handing the Lease back anyway", {
        identity: this.identity,
        slots: lost.size,
        error: error instanceof Error ? error.message : String(error),
      });
      return { error };
    }
  }

  private async applyLatest(until: AbortSignal): Promise<void> {
    const read = await this.store.read();
    if (!read || until.aborted) return;
    const { assignment } = read;
    if (this.applied !== undefined && assignment.epoch <= this.applied) return;
    const next = activeSlotsOf(assignment, this.identity);
    const gained = new Set([...next].filter((s) => !this.active.has(s)));
    const lost = new Set([...this.active].filter((s) => !next.has(s)));
    this.active = next;
    this.ranges = next.size === 0 ? 0 : new SlotSpace(assignment.owners.length).rangesOf(next).length;
    if (gained.size > 0 || lost.size > 0) {
      await this.onAssignment?.({ epoch: assignment.epoch, active: next, gained, lost });
    }
    if (this.fence.aborted) return;
    await this.lease.acknowledge(assignment.epoch);
    this.applied = assignment.epoch;
    this.logger.debug("applied assignment", {
      identity: this.identity,
      epoch: assignment.epoch,
      slots: next.size,
    });
  }
}
