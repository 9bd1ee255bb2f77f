import type { V1Lease } from "@kubernetes/client-node";
import { ApiError, formatMicroTime, isConflict, isNotFound, TransportError } from "@tessera/client";
import {
  Backoff,
  resolveInstrumentation,
  sleep,
  whenAborted,
  type RandomSource,
  type Clock,
  type Instrumentation,
  type Logger,
  type Runnable,
  type Timer,
} from "@tessera/core";
import { resolveDurations, type LeaderElectionDurations } from "@tessera/leader-election";
import { RING_LABEL } from "./assignment-store.js";
import type { LeaseClient } from "./lease-client.js";
import { Milestone } from "./milestone.js";

/** The annotation on a member Lease that carries the last epoch the member applied. */
export const ACKNOWLEDGED_EPOCH_ANNOTATION = "sharding.tessera.dev/acknowledged-epoch";
/** The annotation on a member Lease with how many objects its sharded cache held at the last renewal. */
export const OBJECTS_CACHED_ANNOTATION = "sharding.tessera.dev/objects-cached";
/** The annotation on a member Lease saying whether the server filters its watches by shard (`true`/`false`). */
export const SERVER_FILTERING_ANNOTATION = "sharding.tessera.dev/server-filtering";

/** What a member says about itself on its Lease, for tools such as `tessera shards`. */
export interface MemberReport {
  /** Objects in its sharded cache. */
  objectsCached?: number;
  /** Whether the server filters its lists and watches by shard; undefined until probed. */
  serverFiltering?: boolean;
}

/** The name of a member's Lease: `<ring>-<identity>`. */
export function memberLeaseName(ring: string, identity: string): string {
  return `${ring}-${identity}`;
}

/** Why a member stopped: it could not renew in time, or its run ended. */
export class MemberFencedError extends Error {
  override name = "MemberFencedError";
  constructor(
    readonly reason: "renewDeadlineExceeded" | "stopped",
    message: string,
  ) {
    super(message);
  }
}

/** Options for {@link MemberLease}. */
export interface MemberLeaseOptions extends Partial<LeaderElectionDurations>, Instrumentation {
  /** Where the Lease lives. */
  client: LeaseClient;
  /** The ring's name. */
  ring: string;
  /** This member's identity (for example the pod name); unique in the ring. */
  identity: string;
  /** Read at each renewal and published as annotations; informational, never read by the ring. */
  report?: () => MemberReport;
}

/**
 * A ring member's Lease (`<ring>-<identity>`, labelled with the ring): it says
 * the member is alive and which assignment epoch it has applied.
 *
 * Renewed every retry period. If no renewal succeeds within renewDeadline of
 * the last successful one (counted from when that request was sent), the
 * member fences itself: {@link fence} aborts at once, before the coordinator
 * (which waits leaseDuration plus a margin by its own clock) may give the
 * member's slots to anyone else, and renewal stops for good. A fenced member
 * must not work on any slot again; the process should exit or join anew
 * under a new identity.
 */
export class MemberLease implements Runnable {
  readonly name: string;
  readonly identity: string;
  readonly durations: LeaderElectionDurations;
  private readonly client: LeaseClient;
  private readonly ring: string;
  private readonly clock: Clock;
  private readonly random: RandomSource;
  private readonly logger: Logger;
  private readonly fenceController = new AbortController();
  private lease: V1Lease | undefined;
  private acknowledged: number | undefined;
  private lastSuccessStart = 0;
  private renewTimer: Timer | undefined;
  private deadlineTimer: Timer | undefined;
  private writing: Promise<void> = Promise.resolve();
  private ran = false;
  private readonly holding = new Milestone();
  private readonly report: (() => MemberReport) | undefined;

  /** @throws LeaderElectionConfigError when the durations break leaseDuration > renewDeadline > 1.2 × retryPeriod */
  constructor(options: MemberLeaseOptions) {
    if (!options.identity) throw new Error("MemberLease: identity must not be empty");
    if (!options.ring) throw new Error("MemberLease: ring must not be empty");
    this.durations = resolveDurations(options);
    this.client = options.client;
    this.ring = options.ring;
    this.identity = options.identity;
    this.name = memberLeaseName(options.ring, options.identity);
    this.report = options.report;
    const tools = resolveInstrumentation(options, "@tessera/sharding");
    this.clock = tools.clock;
    this.random = tools.random;
    this.logger = tools.logger;
  }

  /**
   * Aborted (reason {@link MemberFencedError}) when the member must stop all
   * work: a renewal was missed (`"renewDeadlineExceeded"`), or the run ended
   * (`"stopped"`).
   */
  get fence(): AbortSignal {
    return this.fenceController.signal;
  }

  /** The epoch last written as acknowledged. */
  get acknowledgedEpoch(): number | undefined {
    return this.acknowledged;
  }

  /** `Lease <namespace>/<name>`, for messages. */
  describe(): string {
    return `Lease ${this.client.namespace}/${this.name}`;
  }

  /**
   * Holds the Lease until `signal` aborts: creates it, or takes it over when
   * it exists (a restarted member with the same identity), renews it every
   * retry period, and once `signal` aborts stops renewing and hands it back
   * (holder cleared), so the coordinator moves the member's slots at once
   * instead of after the Lease expires. Stop all work on the member's slots
   * before aborting. {@link MemberLease.acquired} tells when the Lease is held.
   *
   * A renewal missed past renewDeadline fences the member ({@link fence}
   * aborts) and renewal stops for good; the run still lasts until `signal`
   * aborts. Once the run has settled, {@link fence} has aborted (reason
   * `"stopped"` unless it was fenced before). A member Lease is held once:
   * a second run rejects.
   *
   * Taking the Lease is retried with backoff while its failure may pass (no
   * answer, 409, 429, 5xx: an apiserver restarting).
   *
   * @throws ApiError when the Lease is refused for good (403, 422: a
   *   missing permission, an invalid name; then {@link MemberLease.acquired}
   *   answers false)
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.ran)
      throw new Error(`${this.describe()}: run() was already called; a member Lease is held once`);
    this.ran = true;
    try {
      if (signal.aborted) return;
      if (!(await this.acquireWithRetries(signal))) return;
      this.holding.reach();
      await whenAborted(signal);
      await this.release();
    } finally {
      this.holding.miss();
      if (!this.fence.aborted) {
        this.stopTimers();
        this.fenceController.abort(new MemberFencedError("stopped", `${this.describe()} was never acquired`));
      }
    }
  }

  /**
   * Resolves `true` once {@link MemberLease.run} holds the Lease (at once if
   * it did already), `false` if the run ended without it (the Lease could not
   * be taken: the run rejects with why) or `signal` aborts first. Never rejects.
   */
  acquired(signal?: AbortSignal): Promise<boolean> {
    return this.holding.wait(signal);
  }

  /**
   * Acquires the Lease, retrying with backoff while the failure may pass (no
   * answer, 409 from a racing writer, 429, 5xx: an apiserver restarting, a
   * connection reset); resolves false if `signal` aborts first. A refusal
   * that will not pass (403, 422) rejects at once, so a missing permission
   * or an invalid name is said, not retried for ever.
   */
  private async acquireWithRetries(signal: AbortSignal): Promise<boolean> {
    const backoff = new Backoff(this.clock, this.random, { initialMs: 500, maxMs: 10_000 });
    for (;;) {
      try {
        await this.acquire();
        return true;
      } catch (err) {
        if (!(err instanceof ApiError) || !isTransient(err)) throw err;
        const waitMs = backoff.next();
        this.logger.warn("could not acquire the member lease; retrying", {
          lease: this.describe(),
          error: err.message,
          retryInMs: Math.round(waitMs),
        });
        await sleep(this.clock, waitMs, signal);
        if (signal.aborted) return false;
      }
    }
  }

  private async acquire(): Promise<void> {
    const sent = this.clock.now();
    const now = this.clock.wallTime();
    const existing = await this.client.get(this.name);
    const body = this.body(existing, { acquireTime: now, renewTime: now });
    this.lease = existing ? await this.replaceOrCreate(body) : await this.client.create(body);
    this.lastSuccessStart = sent;
    this.logger.info("member lease acquired", { lease: this.describe(), identity: this.identity });
    this.armDeadline();
    this.scheduleRenewal();
  }

  /** Replaces the Lease, or creates it when the coordinator deleted it meanwhile (it had been handed back). */
  private async replaceOrCreate(body: V1Lease): Promise<V1Lease> {
    try {
      return await this.client.replace(body);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      const { resourceVersion: _stale, ...metadata } = body.metadata ?? {};
      return this.client.create({ ...body, metadata });
    }
  }

  /**
   * Records that the member has applied `epoch` (it released what it was asked
   * to) and writes it to the Lease at once, so the coordinator can go on.
   */
  acknowledge(epoch: number): Promise<void> {
    if (this.acknowledged !== undefined && epoch <= this.acknowledged) return this.writing;
    this.acknowledged = epoch;
    return this.renewNow();
  }

  /** The end of a run: stops renewing and hands the Lease back (holder cleared), also when fenced. */
  private async release(): Promise<void> {
    if (!this.fence.aborted) {
      this.stopTimers();
      this.fenceController.abort(new MemberFencedError("stopped", `${this.describe()} was released`));
    }
    await this.writing.catch(() => undefined);
    if (!this.lease) return;
    const handBack = (lease: V1Lease) =>
      this.client.replace({ ...lease, spec: { ...lease.spec, holderIdentity: "" } });
    try {
      try {
        this.lease = await handBack(this.lease);
      } catch (err) {
        if (!isConflict(err)) throw err;
        const fresh = await this.client.get(this.name);
        if (!fresh || fresh.spec?.holderIdentity !== this.identity) return;
        this.lease = await handBack(fresh);
      }
      this.logger.info("member lease released", { lease: this.describe() });
    } catch (err) {
      this.logger.warn("could not release the member lease; it will expire", {
        lease: this.describe(),
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }

  private renewNow(): Promise<void> {
    const run = this.writing.then(() => this.renew());
    this.writing = run.catch(() => undefined);
    return run;
  }

  private async renew(): Promise<void> {
    if (this.fence.aborted || !this.lease) return;
    const sent = this.clock.now();
    try {
      const body = this.body(this.lease, { renewTime: this.clock.wallTime() });
      let written: V1Lease;
      try {
        written = await this.client.replace(body);
      } catch (err) {
        if (!isConflict(err)) throw err;
        // someone else wrote the Lease: re-read and write over it, it is ours
        const fresh = await this.client.get(this.name);
        written = fresh
          ? await this.client.replace(this.body(fresh, { renewTime: this.clock.wallTime() }))
          : await this.client.create(this.body(undefined, { renewTime: this.clock.wallTime() }));
      }
      this.lease = written; // even when fenced meanwhile: release() must quote the latest version
      if (this.fence.aborted) return;
      this.lastSuccessStart = Math.max(this.lastSuccessStart, sent);
      this.armDeadline();
    } catch (err) {
      this.logger.warn("member lease renewal failed", {
        lease: this.describe(),
        error: err instanceof Error ? err.message : String(err),
      });
      throw err;
    }
  }

  private scheduleRenewal(): void {
    this.renewTimer = this.clock.setTimer(this.durations.retryPeriodMs, () => {
      if (this.fence.aborted) return;
      void this.renewNow()
        .catch(() => undefined)
        .then(() => {
          if (!this.fence.aborted) this.scheduleRenewal();
        });
    });
  }

  private armDeadline(): void {
    this.deadlineTimer?.cancel();
    const left = this.lastSuccessStart + this.durations.renewDeadlineMs - this.clock.now();
    this.deadlineTimer = this.clock.setTimer(left, () => {
      if (this.fence.aborted) return;
      this.stopTimers();
      const message = `could not renew ${this.describe()} within renewDeadline (${this.durations.renewDeadlineMs} ms)`;
      this.logger.error("member fenced: stopping all work", { lease: this.describe() });
      this.fenceController.abort(new MemberFencedError("renewDeadlineExceeded", message));
    });
  }

  private stopTimers(): void {
    this.renewTimer?.cancel();
    this.deadlineTimer?.cancel();
  }

  private body(base: V1Lease | undefined, times: { acquireTime?: Date; renewTime: Date }): V1Lease {
    const annotations = { ...base?.metadata?.annotations };
    if (this.acknowledged !== undefined)
      annotations[ACKNOWLEDGED_EPOCH_ANNOTATION] = String(this.acknowledged);
    const report = this.report?.();
    if (report?.objectsCached !== undefined)
      annotations[OBJECTS_CACHED_ANNOTATION] = String(report.objectsCached);
    if (report?.serverFiltering !== undefined)
      annotations[SERVER_FILTERING_ANNOTATION] = String(report.serverFiltering);
    return {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: {
        ...base?.metadata,
        name: this.name,
        namespace: this.client.namespace,
        labels: { ...base?.metadata?.labels, [RING_LABEL]: this.ring },
        annotations,
      },
      spec: {
        ...base?.spec,
        holderIdentity: this.identity,
        leaseDurationSeconds: Math.ceil(this.durations.leaseDurationMs / 1000),
        renewTime: microTime(times.renewTime),
        ...(times.acquireTime ? { acquireTime: microTime(times.acquireTime) } : {}),
      },
    };
  }
}

/** The server wants MicroTime strings; client-node's Lease type says Date, which JSON would write with milliseconds. */
function microTime(date: Date): Date {
  return formatMicroTime(date) as unknown as Date;
}

/** A Lease failure worth retrying: no answer at all, a conflict with a racing writer, throttling, or a server error. */
function isTransient(err: ApiError): boolean {
  return err instanceof TransportError || err.code === 409 || err.code === 429 || err.code >= 500;
}
