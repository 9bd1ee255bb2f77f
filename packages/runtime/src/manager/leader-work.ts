import type { KubeConfigLike } from "@tessera/client";
import type { Logger, ResolvedInstrumentation, Runnable } from "@tessera/core";
import { LeaderElector, LeaseLock } from "@tessera/leader-election";
import type { ManagerConfig } from "../config/manager-config.js";
import type { RegisteredRunnable } from "../plugin/plugin-registry.js";
import type { HealthChecks } from "../server/health-checks.js";
import type { BuiltController } from "./controller-factory.js";
import { LeaderElectionLostError } from "./leader-election-lost-error.js";

/** What {@link LeaderWork} runs and reports to. */
export interface LeaderWorkOptions {
  config: ManagerConfig;
  kubeConfig: KubeConfigLike;
  instrumentation: ResolvedInstrumentation;
  logger: Logger;
  health: HealthChecks;
  /** Controllers in `leader` mode. */
  controllers: readonly BuiltController[];
  /** Runnables that need the leader. */
  runnables: readonly RegisteredRunnable[];
  /** Stops the manager: a leader runnable failed, or the Lease was lost while leading. */
  fail: (error: unknown) => void;
}

/**
 * The manager's leader-only work: campaigns for the Lease
 * `<leaderElection.leaseName>`, runs the leader controllers and runnables
 * while it leads, and on shutdown drains before it releases: the elector
 * keeps renewing until the leader work has ended, then hands the Lease back.
 */
export class LeaderWork implements Runnable {
  private working: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: LeaderWorkOptions) {}

  /** Runs until `signal` aborts and the leader work has drained; adds the `leader election` health check. */
  async run(signal: AbortSignal): Promise<void> {
    // The Lease outlives the leader's work: on shutdown the elector keeps renewing until the
    // leader controllers have drained, then releases. Stopping it with the manager's signal
    // would stop renewals while reconciles still run, and a standby could take over mid-reconcile.
    const electorStop = new AbortController();
    const onShutdown = () => void this.working.finally(() => electorStop.abort(signal.reason));
    if (signal.aborted) onShutdown();
    else signal.addEventListener("abort", onShutdown, { once: true });
    const elector = this.elector(signal);
    this.options.health.addHealthCheck("leader election", () => {
      const h = elector.health();
      return h.healthy ? { ok: true } : { ok: false, reason: h.reason ?? "unhealthy" };
    });
    await elector.run(electorStop.signal);
  }

  private elector(signal: AbortSignal): LeaderElector {
    const { config, logger } = this.options;
    const lease = config.leaderElection.leaseName;
    return new LeaderElector({
      ...this.options.instrumentation,
      lock: new LeaseLock({
        kubeConfig: this.options.kubeConfig,
        namespace: config.namespace,
        name: lease,
        identity: config.identity,
        meter: this.options.instrumentation.meter,
      }),
      leaseDurationMs: config.leaderElection.leaseDurationMs,
      renewDeadlineMs: config.leaderElection.renewDeadlineMs,
      retryPeriodMs: config.leaderElection.retryPeriodMs,
      releaseOnCancel: true,
      callbacks: {
        onStartedLeading: async (leading) => {
          logger.info("manager: elected leader; starting leader controllers", {
            lease,
            identity: config.identity,
          });
          await this.lead(leading, signal);
        },
        onStoppedLeading: () => {
          if (!signal.aborted)
            this.options.fail(new LeaderElectionLostError(`${config.namespace}/${lease}`, "renewal failed"));
        },
      },
    });
  }

  /** Runs the leader work until leadership ends or the manager stops, whichever comes first. */
  private async lead(leading: AbortSignal, signal: AbortSignal): Promise<void> {
    const { logger, fail } = this.options;
    // On a shutdown the elector renews until the work has drained, so `leading` aborts while
    // reconciles run only when leadership was lost: a standby may take over within
    // leaseDuration - renewDeadline, so they are aborted at once rather than drained.
    const working = AbortSignal.any([leading, signal]);
    this.working = Promise.all([
      ...this.options.controllers.map(({ controller }) =>
        controller.work(working, { abortInFlight: leading }),
      ),
      ...this.options.runnables.map(({ runnable, name }) =>
        runnable.run(working).catch((error: unknown) => {
          logger.error(`${name} failed; stopping the manager`, { error });
          fail(error);
        }),
      ),
    ]);
    await this.working;
  }
}
