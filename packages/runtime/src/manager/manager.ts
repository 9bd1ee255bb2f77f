import type { AddressInfo } from "node:net";
import { Container, ContainerModule } from "inversify";
import { toError, withFields, type Logger, type Runnable, type Syncable } from "@tessera/core";
import type { SharedInformerFactory } from "@tessera/informers";
import { ControllerBuilder } from "../builder/controller-builder.js";
import { loadConfig } from "../config/load-config.js";
import type { ManagerConfig } from "../config/manager-config.js";
import { checkInsecureTLS, loadKubeConfig } from "@tessera/client";
import type { Plugin, PluginClass } from "../plugin/plugin.js";
import { PluginRegistry, type RegisteredRunnable } from "../plugin/plugin-registry.js";
import { Tokens, type Token } from "../plugin/tokens.js";
import { HealthChecks } from "../server/health-checks.js";
import { containerInstrumentation } from "./container-instrumentation.js";
import { ControllerFactory, type BuiltController } from "./controller-factory.js";
import { bindDefaults, ConversionDefinitions, Transport } from "./default-bindings.js";
import { wireHealthChecks } from "./health-wiring.js";
import { LeaderWork } from "./leader-work.js";
import type { ManagerOptions } from "./manager-options.js";
import { ManagerServers } from "./manager-servers.js";
import { RingMemberFencedError } from "./ring-member-fenced-error.js";
import { controllerMode } from "./controller-mode.js";
import { requireOperatorName } from "../config/require-operator-name.js";
import type { KubeObject } from "@tessera/client";
import type { Controller } from "../reconcile/controller.js";
import type { Request } from "../reconcile/request.js";
import { isConversion } from "../webhook/conversion.js";
import { webhookServer } from "./webhook-wiring.js";

/** Starts a long-running part of the run: when it fails, the manager stops. */
type Watch = (name: string, promise: Promise<unknown>) => void;

/**
 * Runs an operator's controllers and runnables over one inversify container
 * (see {@link Tokens} for what it binds). Built with `Manager.create()`,
 * given reconcilers with {@link Manager.register} or
 * {@link Manager.controller} (and the services they inject with
 * {@link Manager.provide}), and run with {@link Manager.run}:
 *
 * - controllers in `leader` mode reconcile only on the replica holding the
 *   Lease `<config.leaderElection.leaseName>`; the others keep their caches
 *   and queues warm, so a new leader starts without a LIST;
 * - controllers in `sharded` mode reconcile, on every replica, the objects of
 *   the slots it holds in the ring `<config.sharding.ring>-<controller>`;
 * - controllers in `every-replica` mode reconcile everything everywhere.
 *
 * On abort of the run's signal it stops taking work, lets reconciles in
 * flight finish within `config.shutdown.drainTimeoutMs`, hands slots and the
 * Lease back, and resolves.
 */
export class Manager implements Runnable, Syncable {
  /** The container every service and plugin is resolved from. */
  readonly container: Container;
  readonly config: ManagerConfig;
  /** The `/healthz` and `/readyz` checks; add your own before `run`. */
  readonly health = new HealthChecks();
  private readonly plugins: PluginRegistry;
  private readonly servers = new ManagerServers();
  private state: "new" | "running" | "stopped" = "new";
  private synced = false;
  /** Releases what the run registered (gauges) once it stopped. */
  private readonly closers: Array<() => void> = [];
  private readonly syncWaiters = new Set<(synced: boolean) => void>();
  /** The controllers of the run, once built (the kinds resolved). */
  private built: readonly BuiltController[] | undefined;

  /**
   * A manager with its configuration loaded and validated (code, then the
   * config file, then `TESSERA_*` variables; a `ConfigError` (`@tessera/runtime/config`) lists every
   * problem) and the default bindings of {@link Tokens} in a new container.
   */
  static async create(options: ManagerOptions = {}): Promise<Manager> {
    const config = loadConfig({
      ...(options.config ? { config: options.config } : {}),
      ...(options.configFile !== undefined ? { file: options.configFile } : {}),
      ...(options.env ? { env: options.env } : {}),
    });
    const kubeConfig =
      options.kubeConfig ??
      (await loadKubeConfig({
        ...(config.kubeconfig !== undefined ? { file: config.kubeconfig } : {}),
        ...(options.env ? { env: options.env } : {}),
        allowInsecureTLS: config.allowInsecureTLS,
      }));
    const container = new Container();
    const flushDefaults = bindDefaults(container, config, kubeConfig, options);
    // Here, once per manager, so its many clients share one warning (and a KubeConfig given in code is checked too).
    const logger = withFields(container.get(Tokens.Logger), { component: "manager" });
    try {
      checkInsecureTLS(kubeConfig, config.allowInsecureTLS, logger);
    } catch (error) {
      await flushDefaults();
      throw error;
    }
    return new Manager(container, config, flushDefaults);
  }

  /**
   * Use `Manager.create()`; this constructor takes a container already holding
   * the default bindings, and what to run once stopped (`bindDefaults`' result).
   */
  constructor(
    container: Container,
    config: ManagerConfig,
    private readonly flushDefaults: () => Promise<void> = async () => {},
  ) {
    this.container = container;
    this.config = config;
    this.plugins = new PluginRegistry(container);
    container
      .bind(ConversionDefinitions)
      .toConstantValue(() => this.plugins.conversions().map((conversion) => conversion.definition));
  }

  /**
   * True once the manager has started: every cache of its controllers synced
   * and the workers started (leader controllers wait for the Lease on top).
   */
  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves `true` once {@link Manager.hasSynced}; `false` if `signal` aborts or the manager stops first. */
  waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    if (this.state === "stopped" || signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (synced: boolean) => {
        this.syncWaiters.delete(done);
        signal?.removeEventListener("abort", onAbort);
        resolve(synced);
      };
      const onAbort = () => done(false);
      signal?.addEventListener("abort", onAbort, { once: true });
      this.syncWaiters.add(done);
    });
  }

  /**
   * Where the probe, metrics and webhook servers listen once they do
   * (`undefined` for one turned off with bind address "0", and for the
   * webhook server without webhooks); with port 0, the port chosen. The
   * webhook server listens once it has a certificate.
   */
  async endpoints(): Promise<{
    health: AddressInfo | undefined;
    metrics: AddressInfo | undefined;
    webhook: AddressInfo | undefined;
  }> {
    return {
      health: await this.servers.listening("health"),
      metrics: await this.servers.listening("metrics"),
      webhook: await this.servers.listening("webhook"),
    };
  }

  /** The service bound under `token`. */
  get<T>(token: Token<T>): T {
    return this.container.get<T>(token);
  }

  /**
   * Binds a value of your own under `token` (made with `token<T>(name)`) for
   * your plugins to inject: list the token in a class's `static inject` and
   * `provide` it before `run`. Throws if `token` is bound already (a default
   * of {@link Tokens}, or an earlier `provide`): {@link Manager.rebind}
   * replaces a binding.
   *
   * ```ts
   * const Ledger = token<Ledger>("my-operator.Ledger");
   * class Audit implements ManagedRunnable {
   *   static readonly inject = [Ledger] as const;
   *   constructor(private readonly ledger: Ledger) {}
   *   async run(signal: AbortSignal) { ... }
   * }
   * manager.provide(Ledger, new Ledger()).register(Audit);
   * ```
   */
  provide<T>(token: Token<T>, value: T): this {
    this.assertNew("provide");
    if (this.container.isBound(token)) {
      throw new Error(
        `manager.provide(${token.description ?? "token"}): the token is bound already; ` +
          `use manager.rebind(token, value) to replace a binding`,
      );
    }
    this.container.bind<T>(token).toConstantValue(value);
    return this;
  }

  /**
   * Replaces what `token` is bound to (a test swaps the clock, a client, the
   * logger). Only before `run`: services already built keep what they got.
   * To bind a token of your own, use {@link Manager.provide}.
   */
  rebind<T>(token: Token<T>, value: T): this {
    this.assertNew("rebind");
    if (this.container.isBound(token)) this.container.unbind(token);
    this.container.bind<T>(token).toConstantValue(value);
    return this;
  }

  /**
   * Registers plugins: reconciler classes (each declares its controller with
   * `controller(on)`), admission webhook classes (each declares its kind with
   * `webhook(on)`), conversions (`defineConversion`), runnable classes or instances (`needsLeader` says
   * whether one runs only on the leader; default true), or inversify
   * `ContainerModule`s (their bindings join the container, e.g. to provide
   * services the reconcilers inject). A class's `static inject` tokens must
   * be bound by `run`: {@link Manager.provide} binds one of your own.
   *
   * Several at once are checked one by one: `manager.register(...reconcilers)`
   * with `export const reconcilers = [A, B] as const` checks each class's
   * `inject` against its own constructor (without `as const` the list's type
   * is a union of the classes, which no single constructor type fits).
   */
  register<P extends readonly unknown[]>(plugin: Plugin<P>): this;
  register<const L extends readonly (readonly unknown[])[]>(
    ...plugins: { [K in keyof L]: Plugin<L[K]> }
  ): this;
  register(...plugins: readonly Plugin<readonly unknown[]>[]): this {
    this.assertNew("register");
    for (const plugin of plugins) this.registerOne(plugin);
    return this;
  }

  private registerOne(plugin: Plugin<readonly unknown[]>): void {
    if (plugin instanceof ContainerModule) {
      this.container.load(plugin);
      return;
    }
    if (typeof plugin === "function") {
      this.plugins.addClass(plugin as unknown as PluginClass<object, never[]>);
      return;
    }
    if (isConversion(plugin)) {
      this.plugins.addConversion(plugin);
      return;
    }
    if (
      plugin !== null &&
      typeof plugin === "object" &&
      "run" in plugin &&
      typeof plugin.run === "function"
    ) {
      this.add(plugin, { needsLeader: plugin.needsLeader ?? true });
      return;
    }
    throw new TypeError(
      "manager.register takes a reconciler or webhook class, a conversion (defineConversion), a runnable (class or object with run(signal)), or an inversify ContainerModule",
    );
  }

  /** Adds a runnable: `needsLeader` (default true) runs it only while this replica leads. */
  add(runnable: Runnable<unknown>, options: { needsLeader?: boolean } = {}): this {
    this.assertNew("add");
    this.plugins.addRunnable(runnable, options.needsLeader ?? true);
    return this;
  }

  /**
   * A controller declared without a class:
   * `manager.controller().for(Widgets).owns(ConfigMaps).complete(async (req, ctx) => { ... })`.
   */
  controller(): ControllerBuilder {
    this.assertNew("controller");
    return new ControllerBuilder((definition, reconciler) => {
      this.plugins.addController({ definition, reconciler });
    });
  }

  /**
   * Queues a reconcile of `request` by the controller named `controller`,
   * from anywhere (a webhook handler, a runnable, a test), as an event of
   * its watched kinds would. Returns whether it was queued: in `sharded`
   * mode a request whose key falls in a slot another replica holds is
   * dropped here (`false`); call `enqueue` on every replica, and the one
   * holding the slot reconciles it. In `leader` mode a standby queues it,
   * and works it once it leads.
   *
   * Throws for a controller name this manager does not run (listing the
   * ones it does), and before the run has built its controllers: wait for
   * {@link Manager.waitForSync} first.
   */
  enqueue(controller: string, request: Request): boolean {
    return this.builtController("enqueue", controller).enqueue(request);
  }

  /**
   * Queues a reconcile of every cached object of the controller's primary
   * kind (kube-rs's `reconcile_all_on`), behind live events; in `sharded`
   * mode, the objects of this replica's slots. Returns how many were
   * queued. Throws as {@link Manager.enqueue} does.
   */
  reconcileAll(controller: string): number {
    return this.builtController("reconcileAll", controller).reconcileAll();
  }

  private builtController(what: string, name: string): Controller<KubeObject> {
    const declared = [...this.plugins.controllerDeclarations()].map((d) => d.definition.name);
    if (!declared.includes(name)) {
      throw new Error(
        `manager.${what}("${name}"): no controller is named "${name}"; this manager runs ${declared.length ? declared.map((n) => `"${n}"`).join(", ") : "no controllers"} (a controller's name is its .named(...), else its primary kind in lowercase)`,
      );
    }
    const found = this.built?.find((b) => b.controller.name === name);
    if (found === undefined) {
      throw new Error(
        `manager.${what}("${name}"): the manager ${this.state === "stopped" ? "has stopped" : "has not built its controllers yet"}; call it while the manager runs, after await manager.waitForSync()`,
      );
    }
    return found.controller;
  }

  /**
   * Runs until `signal` aborts, then shuts down gracefully and resolves.
   * Rejects before starting anything when a plugin's `static inject` names a
   * token nothing binds (`UnboundTokenError` (`@tessera/runtime/controller`): the plugin, the position,
   * and `manager.provide`). Rejects when start-up fails (a kind the server
   * does not serve, caches that do not sync in time), when a runnable fails,
   * or when leadership is lost (`LeaderElectionLostError`) or a sharded
   * controller's ring member fences itself ({@link RingMemberFencedError});
   * everything started is stopped first.
   */
  async run(signal: AbortSignal): Promise<void> {
    this.assertNew("run");
    this.plugins.checkInjections();
    this.state = "running";
    const logger = withFields(this.get(Tokens.Logger), { component: "manager" });
    const stop = new AbortController();
    let failure: Error | undefined;
    const fail = (error: unknown): void => {
      if (failure === undefined) failure = toError(error);
      stop.abort(failure);
    };
    const onAbort = () => stop.abort(signal.reason);
    if (signal.aborted) stop.abort(signal.reason);
    else signal.addEventListener("abort", onAbort, { once: true });
    const running: Promise<unknown>[] = [];
    const watch: Watch = (name, promise) => {
      running.push(
        promise.catch((error: unknown) => {
          logger.error(`${name} failed; stopping the manager`, { error });
          fail(error);
        }),
      );
    };
    try {
      await this.start(stop.signal, logger, watch, fail);
    } catch (error) {
      fail(error);
    }
    await new Promise<void>((resolve) => {
      if (stop.signal.aborted) resolve();
      else stop.signal.addEventListener("abort", () => resolve(), { once: true });
    });
    logger.info("manager: stopping", { reason: String(toError(stop.signal.reason).message) });
    await Promise.all(running);
    signal.removeEventListener("abort", onAbort);
    await this.stopped();
    logger.info("manager: stopped");
    if (failure !== undefined) throw failure;
  }

  /**
   * The start-up order: servers, controllers built, informers and rings
   * running, caches synced; then the workers of every-replica and sharded
   * controllers and the runnables that need no leader; then the leader work.
   */
  private async start(signal: AbortSignal, logger: Logger, watch: Watch, fail: (error: unknown) => void) {
    const declarations = [...this.plugins.controllerDeclarations()];
    // Before anything starts: an unnamed operator must not take the default name's Leases and rings.
    requireOperatorName(
      this.config,
      declarations.map(({ definition }) => ({
        name: definition.name,
        mode: controllerMode(this.config, definition),
      })),
    );
    this.startServers(signal, watch);
    const factory = this.get(Tokens.InformerFactory);
    const built = await new ControllerFactory(this.container, this.config, (close) =>
      this.closers.push(close),
    ).build(declarations, signal);
    this.built = built;
    watch("informers", factory.run(signal));
    this.startRings(built, signal, watch, fail);
    for (const { controller } of built) controller.watch(signal);
    wireHealthChecks(this.health, factory, built);
    if (!(await this.syncCaches(factory, built, signal))) return;
    logger.info("manager: caches synced", { controllers: built.map((b) => b.controller.name) });
    for (const { controller, ring } of built.filter((b) => b.mode !== "leader")) {
      watch(
        `controller ${controller.name}`,
        controller.work(signal, ring ? { abortInFlight: ring.fenced } : {}),
      );
    }
    const runnables = this.plugins.registeredRunnables();
    for (const { runnable, name } of runnables.filter((r) => !r.needsLeader))
      watch(name, runnable.run(signal));
    this.synced = true;
    for (const done of [...this.syncWaiters]) done(true);
    const leaderControllers = built.filter((b) => b.mode === "leader");
    const leaderRunnables = runnables.filter((r) => r.needsLeader);
    if (leaderControllers.length > 0 || leaderRunnables.length > 0) {
      watch("leader election", this.leaderWork(leaderControllers, leaderRunnables, logger, fail).run(signal));
    }
  }

  /** The probe, metrics and webhook servers, as configured: they run from start to stop, leader or not. */
  private startServers(signal: AbortSignal, watch: Watch): void {
    const webhooks = webhookServer({
      config: this.config,
      get: (token) => this.get(token),
      webhooks: this.plugins.webhookDeclarations(),
      conversions: this.plugins.conversions(),
      health: this.health,
    });
    if (webhooks) this.servers.add("webhook", webhooks);
    this.servers.addConfigured({
      config: this.config,
      health: this.health,
      logger: withFields(this.get(Tokens.Logger), { component: "endpoints" }),
      prometheus: () => this.get(Tokens.Metrics),
      clock: () => this.get(Tokens.Clock),
      transport: () => this.get(Transport),
    });
    for (const { name, runnable } of this.servers.runnables()) watch(name, runnable.run(signal));
  }

  /** Runs each sharded controller's ring; a member that fences itself stops the manager. */
  private startRings(
    built: readonly BuiltController[],
    signal: AbortSignal,
    watch: Watch,
    fail: (error: unknown) => void,
  ): void {
    for (const { ring, controller } of built) {
      if (!ring) continue;
      watch(`ring ${controller.name}`, ring.run(signal));
      ring.fenced.addEventListener(
        "abort",
        () => {
          if (!signal.aborted) fail(new RingMemberFencedError(ring.member.identity, ring.fenced.reason));
        },
        { once: true },
      );
    }
  }

  /** Waits for the caches of unsharded controllers (a reconcile must not see a partial cache); false once `signal` aborted. */
  private async syncCaches(
    factory: SharedInformerFactory,
    built: readonly BuiltController[],
    signal: AbortSignal,
  ): Promise<boolean> {
    await factory.requireSync(signal, this.config.cache.syncTimeoutMs);
    await Promise.all(
      built.map(({ controller, ring }) => (ring ? Promise.resolve(true) : controller.waitForSync(signal))),
    );
    return !signal.aborted;
  }

  private leaderWork(
    controllers: readonly BuiltController[],
    runnables: readonly RegisteredRunnable[],
    logger: Logger,
    fail: (error: unknown) => void,
  ): LeaderWork {
    return new LeaderWork({
      config: this.config,
      kubeConfig: this.get(Tokens.KubeConfig),
      instrumentation: containerInstrumentation(this.container),
      logger,
      health: this.health,
      controllers,
      runnables,
      fail,
    });
  }

  /** Marks the run stopped and releases what it held. */
  private async stopped(): Promise<void> {
    this.state = "stopped";
    this.built = undefined;
    for (const done of [...this.syncWaiters]) done(false);
    await this.flushDefaults();
    for (const close of this.closers.splice(0)) close();
  }

  private assertNew(what: string): void {
    if (this.state !== "new") {
      throw new Error(
        `manager.${what}(): the manager has ${this.state === "running" ? "started" : "stopped"}; register and configure before run()`,
      );
    }
  }
}
