import {
  resolveInstrumentation,
  sleep,
  timeoutScope,
  withFields,
  type Clock,
  type Instrumentation,
  type Logger,
  type RandomSource,
  type Runnable,
  type Timer,
} from "@tessera/core";
import {
  JITTER_FACTOR,
  LeaderElectionConfigError,
  resolveDurations,
  type LeaderElectionDurations,
} from "./leader-election-config.js";
import { LeaderElectionMetrics, type RenewFailureReason } from "./leader-election-metrics.js";
import { sameRecord, type LeaderElectionRecord, type VersionedRecord } from "./leader-election-record.js";
import { LeadershipEndedError, type LeadershipEndReason } from "./leadership-ended-error.js";
import { ApiError, isForbidden, isUnauthorized } from "@tessera/client";
import { isLostRace, type ResourceLock } from "./resource-lock.js";

/** What a {@link LeaderElector} calls as leadership comes and goes. */
export interface LeaderCallbacks {
  /**
   * Called once this elector holds the lock. `signal` aborts, with a
   * {@link LeadershipEndedError} as its reason, the moment leadership ends:
   * when `run()` is cancelled, or before the lease could expire for anyone
   * else when renewal fails. Return a promise to have the elector wait for
   * the work to wind down before it releases the lock and returns. As in
   * client-go, leadership does not end when this returns or fails (a failure
   * is logged); abort `run()`'s signal to give it up.
   */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Called after leadership ended (never when this elector did not lead). */
  onStoppedLeading?(): void;
  /** Called when the observed holder changes to a new identity (this elector's own included). */
  onNewLeader?(identity: string): void;
}

/**
 * Options for {@link LeaderElector}; durations are checked at construction.
 * `clock`, `random`, `logger` and `meter` ({@link Instrumentation}) default to
 * the system clock, `Math.random`, the silent logger and the global meter
 * named `@tessera/leader-election`; the meter carries the instruments listed
 * on {@link LeaderElectionMetrics}.
 */
export interface LeaderElectorOptions extends Partial<LeaderElectionDurations>, Instrumentation {
  /** The lock to compete for; its identity is this elector's. */
  lock: ResourceLock;
  /** Leadership callbacks. */
  callbacks: LeaderCallbacks;
  /**
   * Hand the lock back when leadership ends (holder cleared, so the next
   * candidate takes over on its next retry instead of waiting out the lease).
   * Default true.
   */
  releaseOnCancel?: boolean;
  /** The election's name in metrics (attribute `name`); default the lock's description. */
  name?: string;
  /**
   * Upper bound for one lock request; a renewal is also bounded by what is
   * left of renewDeadline. Default max(retryPeriod, renewDeadline / 2).
   */
  requestTimeoutMs?: number;
}

/** How a call to {@link LeaderElector.run} ended. */
export interface LeaderElectionResult {
  /** Whether this elector led at some point during the run. */
  led: boolean;
  /** Why it returned. */
  reason: LeadershipEndReason;
}

/** What {@link LeaderElector.health} reports, for a liveness or readiness probe. */
export interface LeaderElectionHealth {
  healthy: boolean;
  /** Whether this elector leads right now. */
  leading: boolean;
  /** Why it is unhealthy. */
  reason?: string;
}

type AttemptResult = { ok: true } | { ok: false; reason: RenewFailureReason };

/**
 * Lease-based leader election with client-go's semantics.
 *
 * A candidate reads the lock every retry period (jittered). It takes the
 * lock when it is free, released, or when the candidate has seen the very
 * same record, unchanged, for the record's lease duration by its own
 * monotonic clock: it never compares another host's `renewTime` with its own
 * clock. Every write quotes the version read, so of two candidates racing
 * only one wins.
 *
 * The leader renews every retry period. If it cannot renew within
 * renewDeadline of its last successful renewal (counted from when that
 * request was sent), it aborts the signal it gave to `onStartedLeading` at
 * once and reports itself unhealthy; as renewDeadline < leaseDuration, that
 * happens before any candidate may take the lock. `run()` then resolves
 * with `renewDeadlineExceeded`; whether the process exits or campaigns again
 * is the caller's choice.
 *
 * ```ts
 * const elector = new LeaderElector({
 *   lock: new LeaseLock({ kubeConfig, namespace: "default", name: "my-operator", identity: podName }),
 *   callbacks: { onStartedLeading: (signal) => controllers.run(signal) },
 * });
 * const stop = new AbortController();
 * process.once("SIGTERM", () => stop.abort());
 * await elector.run(stop.signal); // releases the lease on the way out
 * ```
 */
export class LeaderElector implements Runnable<LeaderElectionResult> {
  /** The durations in force. */
  readonly durations: LeaderElectionDurations;
  /** This elector's identity (the lock's). */
  readonly identity: string;
  private readonly lock: ResourceLock;
  private readonly callbacks: LeaderCallbacks;
  private readonly releaseOnCancel: boolean;
  private readonly requestTimeoutMs: number;
  private readonly clock: Clock;
  private readonly random: RandomSource;
  /** Every line names the lock and the identity. */
  private readonly logger: Logger;
  private readonly metrics: LeaderElectionMetrics;

  private observed: VersionedRecord | undefined;
  private observedTime = 0;
  private reportedLeader = "";
  private running = false;
  private leadership: AbortController | undefined;
  private lastRenewStart = 0;
  private lastFailure: ApiError | undefined;
  private lost: string | undefined;

  /** @throws LeaderElectionConfigError when the durations break leaseDuration > renewDeadline > 1.2 × retryPeriod */
  constructor(options: LeaderElectorOptions) {
    this.durations = resolveDurations(options);
    if (!options.lock) throw new LeaderElectionConfigError("lock is required");
    if (!options.lock.identity) throw new LeaderElectionConfigError("the lock's identity must not be empty");
    if (typeof options.callbacks?.onStartedLeading !== "function") {
      throw new LeaderElectionConfigError("callbacks.onStartedLeading is required");
    }
    const requestTimeoutMs =
      options.requestTimeoutMs ?? Math.max(this.durations.retryPeriodMs, this.durations.renewDeadlineMs / 2);
    if (!Number.isFinite(requestTimeoutMs) || requestTimeoutMs <= 0) {
      throw new LeaderElectionConfigError(
        `requestTimeoutMs must be a positive number of milliseconds, got ${requestTimeoutMs}`,
      );
    }
    this.lock = options.lock;
    this.identity = options.lock.identity;
    this.callbacks = options.callbacks;
    this.releaseOnCancel = options.releaseOnCancel ?? true;
    this.requestTimeoutMs = requestTimeoutMs;
    const tools = resolveInstrumentation(options, "@tessera/leader-election");
    this.clock = tools.clock;
    this.random = tools.random;
    this.logger = withFields(tools.logger, { lock: this.lock.describe(), identity: this.identity });
    this.metrics = new LeaderElectionMetrics(tools.meter, options.name ?? this.lock.describe());
  }

  /** Whether this elector leads right now. */
  get isLeader(): boolean {
    return this.leadership !== undefined && !this.leadership.signal.aborted;
  }

  /** The holder this elector last observed; `undefined` when none (or not yet read). */
  get leader(): string | undefined {
    return this.observed?.record.holderIdentity || undefined;
  }

  /** The record this elector last read or wrote. */
  get observedRecord(): LeaderElectionRecord | undefined {
    return this.observed && { ...this.observed.record };
  }

  /** The last failed lock operation (cleared by the next success). */
  get lastError(): ApiError | undefined {
    return this.lastFailure;
  }

  /** Shorthand for `health().healthy`. */
  get healthy(): boolean {
    return this.health().healthy;
  }

  /**
   * Unhealthy when leading without a renewal for longer than renewDeadline,
   * when the last run lost leadership because renewal failed, or when the
   * lock refuses this identity (401/403). Healthy otherwise, candidates
   * included.
   */
  health(): LeaderElectionHealth {
    if (this.isLeader) {
      const since = this.clock.now() - this.lastRenewStart;
      if (since > this.durations.renewDeadlineMs) {
        return {
          healthy: false,
          leading: true,
          reason:
            `leading ${this.lock.describe()} without a renewal for ${Math.round(since)} ms ` +
            `(renewDeadline ${this.durations.renewDeadlineMs} ms)`,
        };
      }
      return { healthy: true, leading: true };
    }
    if (this.lost) return { healthy: false, leading: false, reason: this.lost };
    // 401 and 403: retrying will not help until the credentials or RBAC change.
    if (isForbidden(this.lastFailure) || isUnauthorized(this.lastFailure)) {
      return { healthy: false, leading: false, reason: this.lastFailure.message };
    }
    return { healthy: true, leading: false };
  }

  /**
   * Campaigns until this elector leads, leads until `signal` aborts or
   * renewal fails, then (by default) releases the lock and resolves with how
   * leadership ended, once the work started under `onStartedLeading` has
   * settled. Lock errors never reject it: they are logged, kept in
   * {@link lastError} and retried. It may be called again once it has
   * settled; it rejects if a run is already in progress.
   */
  async run(signal: AbortSignal): Promise<LeaderElectionResult> {
    if (this.running) throw new Error(`LeaderElector ${this.identity}: run() is already in progress`);
    this.running = true;
    this.lost = undefined;
    try {
      if (!(await this.acquire(signal))) return { led: false, reason: "cancelled" };
      return { led: true, reason: await this.lead(signal) };
    } finally {
      this.running = false;
    }
  }

  private async acquire(signal: AbortSignal): Promise<boolean> {
    this.logger.info("campaigning for leadership");
    while (!signal.aborted) {
      const result = await this.attempt(this.requestTimeoutMs, [signal]);
      this.reportLeader();
      if (result.ok) return true;
      await sleep(this.clock, this.acquireWait(result.reason), signal);
    }
    return false;
  }

  /**
   * A jittered retry period, 1 to 1 + {@link JITTER_FACTOR} periods; when the
   * lock is held by another, cut short to the moment its lease would expire
   * by our observation, if that comes sooner.
   */
  private acquireWait(failure: RenewFailureReason): number {
    const { retryPeriodMs } = this.durations;
    const jittered = retryPeriodMs * (1 + this.random() * JITTER_FACTOR);
    if (failure !== "taken") return jittered;
    const untilExpiry = this.observedTime + this.observedLeaseMs() - this.clock.now();
    return Math.max(0, Math.min(jittered, untilExpiry));
  }

  private async lead(signal: AbortSignal): Promise<LeadershipEndReason> {
    const leadership = new AbortController();
    this.leadership = leadership;
    leadership.signal.addEventListener("abort", () => this.metrics.stoppedLeading(), { once: true });
    let endReason: LeadershipEndReason = "cancelled";
    const stepDown = (reason: LeadershipEndReason, message: string) => {
      if (leadership.signal.aborted) return;
      endReason = reason;
      this.lost = message;
      this.logger.warn("stopped leading", { reason, detail: message });
      leadership.abort(new LeadershipEndedError(reason, message));
    };
    const deadlineMessage = () =>
      `could not renew ${this.lock.describe()} within renewDeadline (${this.durations.renewDeadlineMs} ms)` +
      (this.lastFailure ? `; last error: ${this.lastFailure.message}` : "");
    let deadline: Timer | undefined;
    const armDeadline = () => {
      deadline?.cancel();
      const left = this.lastRenewStart + this.durations.renewDeadlineMs - this.clock.now();
      deadline = this.clock.setTimer(left, () => stepDown("renewDeadlineExceeded", deadlineMessage()));
    };
    armDeadline();

    this.metrics.startedLeading();
    this.logger.info("started leading");
    const work = this.startWork(leadership.signal);
    // Waits between renewals end early when we are stopped or step down.
    const stoppedOrLost = AbortSignal.any([signal, leadership.signal]);

    while (!leadership.signal.aborted && !signal.aborted) {
      await sleep(this.clock, this.durations.retryPeriodMs, stoppedOrLost);
      if (leadership.signal.aborted || signal.aborted) break;
      const left = this.lastRenewStart + this.durations.renewDeadlineMs - this.clock.now();
      const result = await this.attempt(Math.min(this.requestTimeoutMs, left), [signal, leadership.signal]);
      if (leadership.signal.aborted) break;
      if (result.ok) {
        armDeadline();
        continue;
      }
      if (signal.aborted) break;
      this.metrics.renewFailed(result.reason);
      if (result.reason === "taken") {
        // Stop acting first, then tell the caller who leads now.
        stepDown("leaseTaken", `${this.lock.describe()} is now held by ${this.leader ?? "another identity"}`);
        this.reportLeader();
      } else {
        this.logger.warn("failed to renew", {
          reason: result.reason,
          error: this.lastFailure?.message,
        });
      }
    }
    deadline?.cancel();
    if (!leadership.signal.aborted) {
      this.logger.info("leadership cancelled");
      leadership.abort(
        new LeadershipEndedError("cancelled", `leadership of ${this.lock.describe()} was cancelled`),
      );
    }
    this.leadership = undefined;
    await work;
    if (this.releaseOnCancel) await this.release();
    try {
      this.callbacks.onStoppedLeading?.();
    } catch (err) {
      this.logger.error("onStoppedLeading threw", { error: String(err) });
    }
    return endReason;
  }

  private startWork(signal: AbortSignal): Promise<void> {
    const failed = (err: unknown) =>
      this.logger.error("onStartedLeading failed", {
        error: err instanceof Error ? err.message : String(err),
      });
    try {
      return Promise.resolve(this.callbacks.onStartedLeading(signal)).catch(failed);
    } catch (err) {
      failed(err);
      return Promise.resolve();
    }
  }

  /** Clears the holder so the next candidate need not wait out the lease. */
  private async release(): Promise<void> {
    const observed = this.observed;
    if (!observed || observed.record.holderIdentity !== this.identity) return;
    const now = this.clock.wallTime();
    const record: LeaderElectionRecord = {
      holderIdentity: "",
      leaseDurationSeconds: 1,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: observed.record.leaseTransitions,
    };
    const scope = timeoutScope(this.clock, this.requestTimeoutMs, `releasing ${this.lock.describe()}`, []);
    try {
      let version: string;
      try {
        version = await this.lock.update(record, observed.version, scope.signal);
      } catch (err) {
        // A renewal cut short by the stop may still have landed on the
        // server, moving the version on. If the lock still names us, the
        // hold is ours to give back; if it names anyone else, leave it.
        if (!isLostRace(err)) throw err;
        const current = await this.lock.get(scope.signal);
        if (current?.record.holderIdentity !== this.identity) {
          this.logger.info("not releasing: the lock has moved on", {
            leader: current?.record.holderIdentity,
          });
          return;
        }
        record.leaseTransitions = current.record.leaseTransitions;
        version = await this.lock.update(record, current.version, scope.signal);
      }
      this.observed = { record, version };
      this.observedTime = this.clock.now();
      this.logger.info("released the lock");
    } catch (err) {
      this.logger.warn("could not release the lock", {
        error: err instanceof Error ? err.message : String(err),
      });
    } finally {
      scope.close();
    }
  }

  /** One bounded try to acquire or renew, with errors turned into a reason. */
  private async attempt(timeoutMs: number, signals: Array<AbortSignal | undefined>): Promise<AttemptResult> {
    const scope = timeoutScope(this.clock, timeoutMs, `${this.lock.describe()} request`, signals);
    try {
      const outcome = await this.tryAcquireOrRenew(scope.signal);
      this.lastFailure = undefined;
      return outcome === "acquired" ? { ok: true } : { ok: false, reason: "taken" };
    } catch (err) {
      if (isLostRace(err)) {
        this.logger.debug("lost a race for the lock", { verb: err.verb });
        return { ok: false, reason: "conflict" };
      }
      const failure =
        err instanceof ApiError
          ? err
          : new ApiError(
              { verb: "get", resource: this.lock.describe() },
              0,
              "Unknown",
              err instanceof Error ? err.message : String(err),
              undefined,
              { cause: err },
            );
      // A request cut short by our own cancellation is not a lock failure.
      if (scope.signal.aborted && !scope.timedOut) return { ok: false, reason: "error" };
      this.lastFailure = failure;
      this.logger.warn("lock request failed", {
        verb: failure.verb,
        status: failure.code,
        error: failure.message,
      });
      return { ok: false, reason: scope.timedOut ? "timeout" : "error" };
    } finally {
      scope.close();
    }
  }

  private async tryAcquireOrRenew(signal: AbortSignal): Promise<"acquired" | "held"> {
    const start = this.clock.now();
    const wall = this.clock.wallTime();
    const desired: LeaderElectionRecord = {
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.ceil(this.durations.leaseDurationMs / 1000),
      acquireTime: wall,
      renewTime: wall,
      leaseTransitions: 0,
    };

    // Fast path: we lead and our lease is still ours by our own clock.
    const mine = this.observed;
    if (mine && mine.record.holderIdentity === this.identity && this.leaseValid(start)) {
      const record = {
        ...desired,
        acquireTime: mine.record.acquireTime,
        leaseTransitions: mine.record.leaseTransitions,
      };
      try {
        this.wrote(record, await this.lock.update(record, mine.version, signal), start);
        return "acquired";
      } catch (err) {
        if (!isLostRace(err)) throw err;
        this.logger.debug("renewal conflicted; re-reading the lock");
      }
    }

    const current = await this.lock.get(signal);
    if (!current) {
      this.wrote(desired, await this.lock.create(desired, signal), start);
      return "acquired";
    }
    const seenAt = this.clock.now();
    if (!sameRecord(current.record, this.observed?.record)) this.observedTime = seenAt;
    this.observed = current;

    const holder = current.record.holderIdentity;
    if (holder !== "" && holder !== this.identity && this.leaseValid(seenAt)) return "held";

    const record =
      holder === this.identity
        ? {
            ...desired,
            acquireTime: current.record.acquireTime,
            leaseTransitions: current.record.leaseTransitions,
          }
        : { ...desired, leaseTransitions: current.record.leaseTransitions + 1 };
    this.wrote(record, await this.lock.update(record, current.version, signal), start);
    return "acquired";
  }

  /** Records a successful write of ourselves as holder, timed from before the request was sent. */
  private wrote(record: LeaderElectionRecord, version: string, sentAt: number): void {
    this.observed = { record, version };
    this.observedTime = sentAt;
    this.lastRenewStart = sentAt;
  }

  /** The observed record's lease duration, or ours when it carries none. */
  private observedLeaseMs(): number {
    const seconds = this.observed?.record.leaseDurationSeconds ?? 0;
    return seconds > 0 ? seconds * 1000 : this.durations.leaseDurationMs;
  }

  /** Whether the observed record has been seen unchanged for less than its lease duration. */
  private leaseValid(now: number): boolean {
    return this.observedTime + this.observedLeaseMs() > now;
  }

  private reportLeader(): void {
    const holder = this.observed?.record.holderIdentity ?? "";
    if (holder === this.reportedLeader) return;
    this.reportedLeader = holder;
    if (!holder) return;
    this.logger.info("new leader observed", { leader: holder });
    try {
      this.callbacks.onNewLeader?.(holder);
    } catch (err) {
      this.logger.error("onNewLeader threw", { error: String(err) });
    }
  }
}
