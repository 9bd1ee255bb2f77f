import type { KubeConfig } from "@kubernetes/client-node";
import {
  resolveInstrumentation,
  sleep,
  type Clock,
  type Instrumentation,
  type Logger,
  type ResolvedInstrumentation,
} from "@tessera/core";
import type { LeaderElectionDurations } from "@tessera/leader-election";
import { activeSlotsOf } from "./assignment.js";
import { ConfigMapAssignmentStore, type VersionedAssignment } from "./assignment-store.js";
import { KubernetesLeaseClient, type LeaseClient } from "./lease-client.js";
import { shareConnections } from "./connection-sharing.js";
import { MemberLease } from "./member-lease.js";
import { MemberMetrics } from "./sharding-metrics.js";
import { SlotSpace } from "./slot-space.js";

/** Where a member reads the published assignment; {@link ConfigMapAssignmentStore} is one. */
export interface AssignmentReader {
  read(): Promise<VersionedAssignment | undefined>;
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
  kubeConfig: KubeConfig;
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
   * member acknowledge the epoch and let the slots move on.
   */
  onAssignment?: (change: SlotChange) => void | Promise<void>;
  /** Where the member Lease lives; default the namespace's Leases through `kubeConfig`. */
  leases?: LeaseClient;
  /** Where the assignment is read; default `ConfigMap <namespace>/<ring>-assignment`. */
  store?: AssignmentReader;
}

/**
 * One member of a ring: holds its member Lease, follows the published
 * assignment, and acknowledges each epoch once it has let go of what it lost.
 * {@link activeSlots} is what the dequeue guard should consult.
 *
 * When the Lease cannot be renewed in time the member fences itself:
 * {@link activeSlots} becomes empty at once and {@link fence} aborts; it never
 * works again (exit the process, or start a member with a new identity).
 */
export class ShardMember {
  readonly lease: MemberLease;
  readonly identity: string;
  private readonly store: AssignmentReader;
  private readonly metrics: MemberMetrics;
  private readonly tools: ResolvedInstrumentation;
  private ranges = 0;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly pollIntervalMs: number;
  private readonly onAssignment: ShardMemberOptions["onAssignment"];
  private active: ReadonlySet<number> = new Set();
  private applied: number | undefined;
  private readonly stopping = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(options: ShardMemberOptions) {
    options = { ...options, kubeConfig: shareConnections(options.kubeConfig) };
    this.identity = options.identity;
    this.tools = resolveInstrumentation(options, "@tessera/sharding");
    this.clock = this.tools.clock;
    this.logger = this.tools.logger;
    this.pollIntervalMs = options.pollIntervalMs ?? 500;
    this.onAssignment = options.onAssignment;
    this.store =
      options.store ??
      new ConfigMapAssignmentStore({
        kubeConfig: options.kubeConfig,
        namespace: options.namespace,
        ring: options.ring,
      });
    this.lease = new MemberLease({
      ...options,
      client: options.leases ?? new KubernetesLeaseClient(options.kubeConfig, options.namespace),
      ...this.tools,
    });
    this.metrics = new MemberMetrics(this.tools.meter, options.ring, options.identity, () => ({
      slots: this.active.size,
      ranges: this.active.size === 0 ? 0 : this.ranges,
      epoch: this.applied,
      fenced: this.fence.aborted,
    }));
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

  /** Aborted when the member must stop all work (fenced or stopped). */
  get fence(): AbortSignal {
    return this.lease.fence;
  }

  /** Joins the ring: takes the member Lease and starts following the assignment. */
  async start(): Promise<void> {
    await this.lease.start();
    this.loop = this.follow();
  }

  /**
   * Graceful exit: gives up every slot (waiting for `onAssignment` to let go
   * of them), then hands the Lease back so the slots move at once.
   */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
    const lost = this.active;
    this.active = new Set();
    if (lost.size > 0 && !this.fence.aborted) {
      await this.onAssignment?.({ epoch: this.applied ?? 0, active: this.active, gained: new Set(), lost });
    }
    await this.lease.release();
  }

  /** Stops reporting metrics. */
  close(): void {
    this.metrics.close();
  }

  private async follow(): Promise<void> {
    while (!this.stopping.signal.aborted && !this.fence.aborted) {
      try {
        await this.applyLatest();
      } catch (err) {
        this.logger.warn("could not apply the assignment; retrying", {
          identity: this.identity,
          error: err instanceof Error ? err.message : String(err),
        });
      }
      await sleep(this.clock, this.pollIntervalMs, this.stopping.signal);
    }
  }

  private async applyLatest(): Promise<void> {
    const read = await this.store.read();
    if (!read || this.fence.aborted || this.stopping.signal.aborted) return;
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
