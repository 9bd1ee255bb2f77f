import { Container, ContainerModule, type ServiceIdentifier } from "inversify";
import { toError, withFields, type Logger, type Runnable, type Syncable } from "@tessera/core";
import type { SharedIndexInformer } from "@tessera/informers";
import { LeaderElector, LeaseLock } from "@tessera/leader-election";
import type { KubeObject, Resource } from "@tessera/client";
import { ControllerBuilder, type ControllerDefinition } from "../builder/controller-builder.js";
import { isResource, type Kind } from "../builder/kind.js";
import type { ManagerConfig } from "../config/manager-config.js";
import { enqueueForObject, enqueueForOwner } from "../handler/event-handler.js";
import type { ManagedRunnable, Plugin, PluginClass, ReconcilerPlugin } from "../plugin/plugin.js";
import { Tokens, type Token } from "../plugin/tokens.js";
import { Controller, type ControllerSource } from "../reconcile/controller.js";
import type { Reconciler } from "../reconcile/reconciler.js";
import { ControllerRing } from "./controller-ring.js";
import { RingBacklogMetrics } from "./ring-backlog-metrics.js";
import { controllerMode } from "./controller-mode.js";
import { HealthChecks } from "../server/health-checks.js";
import { parseBindAddress } from "../server/bind-address.js";
import { EndpointServer, type EndpointHandler } from "../server/endpoint-server.js";
import type { BindAddress } from "../server/bind-address.js";
import { withAuthenticationAndAuthorization } from "../server/authenticated-handler.js";
import { readServingCertificate, type ServingCertificate } from "../server/serving-certificate.js";
import { selfSignedCertificate } from "../server/self-signed-certificate.js";
import { SubjectAccessReviewAuthorizer } from "../server/subject-access-review-authorizer.js";
import { TokenReviewAuthenticator } from "../server/token-review-authenticator.js";
import { hostname } from "node:os";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { LeaderElectionLostError } from "./leader-election-lost-error.js";
import { RingMemberFencedError } from "./ring-member-fenced-error.js";
import { bindDefaults, Transport } from "./default-bindings.js";
import { loadKubeConfig, checkInsecureTLS } from "@tessera/client";
import type { ManagerOptions } from "./manager-options.js";
import { loadConfig } from "../config/load-config.js";

type AnyDefinition = ControllerDefinition<KubeObject>;
type PendingController =
  | { readonly type: "class"; readonly plugin: PluginClass<ReconcilerPlugin<never>, never[]> }
  | {
      readonly type: "defined";
      readonly definition: AnyDefinition;
      readonly reconciler: Reconciler<KubeObject>;
    };
type PendingRunnable =
  | { readonly type: "instance"; readonly runnable: ManagedRunnable; readonly needsLeader: boolean }
  | { readonly type: "class"; readonly plugin: PluginClass<ManagedRunnable, never[]> };

/** A controller ready to run: its mode and, when sharded, its ring. */
interface BuiltController {
  readonly controller: Controller<KubeObject>;
  readonly mode: ManagerConfig["mode"];
  readonly ring: ControllerRing<KubeObject> | undefined;
}

/**
 * Runs an operator's controllers and runnables over one inversify container
 * (see {@link Tokens} for what it binds). Built with `Manager.create()`
 * (in create-manager.ts), given reconcilers with {@link Manager.register} or
 * {@link Manager.controller}, and run with {@link Manager.run}:
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
  private readonly pendingControllers: PendingController[] = [];
  private readonly pendingRunnables: PendingRunnable[] = [];
  private state: "new" | "running" | "stopped" = "new";
  private synced = false;
  /** Releases what the run registered (gauges) once it stopped. */
  private readonly closers: Array<() => void> = [];
  private servers: { health?: EndpointServer; metrics?: EndpointServer } = {};
  private readonly syncWaiters = new Set<(synced: boolean) => void>();

  /**
   * A manager with its configuration loaded and validated (code, then the
   * config file, then `TESSERA_*` variables; a {@link ConfigError} lists every
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
   * Where the probe and metrics servers listen once they do (`undefined` for
   * one turned off with bind address "0"); with port 0, the port chosen.
   */
  async endpoints(): Promise<{ health: AddressInfo | undefined; metrics: AddressInfo | undefined }> {
    return {
      health: await this.servers.health?.listening(),
      metrics: await this.servers.metrics?.listening(),
    };
  }

  /** The service bound under `token`. */
  get<T>(token: Token<T>): T {
    return this.container.get<T>(token);
  }

  /**
   * Replaces what `token` is bound to (a test swaps the clock, a client, the
   * logger). Only before `run`: services already built keep what they got.
   */
  rebind<T>(token: Token<T>, value: T): this {
    this.assertNew("rebind");
    if (this.container.isBound(token)) this.container.unbind(token);
    this.container.bind<T>(token).toConstantValue(value);
    return this;
  }

  /**
   * Registers a plugin: a reconciler class (it declares its controller with
   * `controller(on)`), a runnable class or instance (`needsLeader` says
   * whether it runs only on the leader; default true), or an inversify
   * `ContainerModule` (its bindings join the container, e.g. to provide
   * services the reconcilers inject).
   */
  register<P extends readonly unknown[]>(plugin: Plugin<P>): this {
    this.assertNew("register");
    if (plugin instanceof ContainerModule) {
      this.container.load(plugin);
      return this;
    }
    if (typeof plugin === "function") {
      const cls = plugin as unknown as PluginClass<object, never[]>;
      this.bindClass(cls);
      const prototype = cls.prototype as Record<string, unknown>;
      if (typeof prototype["reconcile"] === "function") {
        if (typeof prototype["controller"] !== "function") {
          throw new TypeError(
            `${plugin.name}: a reconciler plugin needs a controller(on) method returning on.for(kind)...; ` +
              `or declare it with manager.controller().for(kind).complete(reconciler)`,
          );
        }
        this.pendingControllers.push({
          type: "class",
          plugin: cls as PluginClass<ReconcilerPlugin<never>, never[]>,
        });
      } else if (typeof prototype["run"] === "function") {
        this.pendingRunnables.push({
          type: "class",
          plugin: cls as PluginClass<ManagedRunnable, never[]>,
        });
      } else {
        throw new TypeError(
          `${plugin.name}: not a plugin: a class must have reconcile() and controller() (a reconciler) or run(signal) (a runnable)`,
        );
      }
      return this;
    }
    if (plugin !== null && typeof plugin === "object" && typeof plugin.run === "function") {
      return this.add(plugin, { needsLeader: plugin.needsLeader ?? true });
    }
    throw new TypeError(
      "manager.register takes a reconciler class, a runnable (class or object with run(signal)), or an inversify ContainerModule",
    );
  }

  /** Adds a runnable: `needsLeader` (default true) runs it only while this replica leads. */
  add(runnable: Runnable<unknown>, options: { needsLeader?: boolean } = {}): this {
    this.assertNew("add");
    this.pendingRunnables.push({ type: "instance", runnable, needsLeader: options.needsLeader ?? true });
    return this;
  }

  /**
   * A controller declared without a class:
   * `manager.controller().for(Widgets).owns(ConfigMaps).complete(async (req, ctx) => { ... })`.
   */
  controller(): ControllerBuilder {
    this.assertNew("controller");
    return new ControllerBuilder((definition, reconciler) => {
      this.pendingControllers.push({
        type: "defined",
        definition: definition,
        reconciler: reconciler,
      });
    });
  }

  /**
   * Runs until `signal` aborts, then shuts down gracefully and resolves.
   * Rejects when start-up fails (a kind the server does not serve, caches
   * that do not sync in time), when a runnable fails, or when leadership is
   * lost ({@link LeaderElectionLostError}) or a sharded controller's ring
   * member fences itself ({@link RingMemberFencedError}); everything started
   * is stopped first.
   */
  async run(signal: AbortSignal): Promise<void> {
    this.assertNew("run");
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
    const watch = (name: string, promise: Promise<unknown>): void => {
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
    this.state = "stopped";
    for (const done of [...this.syncWaiters]) done(false);
    await this.flushDefaults();
    for (const close of this.closers.splice(0)) close();
    logger.info("manager: stopped");
    if (failure !== undefined) throw failure;
  }

  private async start(
    signal: AbortSignal,
    logger: Logger,
    watch: (name: string, promise: Promise<unknown>) => void,
    fail: (error: unknown) => void,
  ): Promise<void> {
    const config = this.config;
    for (const runnable of this.startupRunnables()) watch(runnable.name, runnable.run(signal));
    const built = await this.buildControllers(signal);
    const factory = this.get(Tokens.InformerFactory);
    watch("informers", factory.run(signal));
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
    for (const { controller } of built) controller.watch();
    this.health.addHealthCheck("watches", () => {
      const informers = [...factory.informers, ...built.flatMap((b) => (b.ring ? [b.ring.informer] : []))];
      for (const informer of informers) {
        const health = informer.health();
        if (!health.healthy)
          return { ok: false, reason: health.reason ?? `informer ${informer.name} is deaf` };
      }
      return { ok: true };
    });
    this.health.addReadyCheck("informers", () =>
      factory.hasSynced() ? { ok: true } : { ok: false, reason: "informers have not synced" },
    );
    for (const { controller, ring } of built) {
      this.health.addReadyCheck(`controller ${controller.name}`, () =>
        controller.hasSynced() || ring !== undefined
          ? { ok: true }
          : { ok: false, reason: `controller ${controller.name}: caches have not synced` },
      );
      if (ring) {
        this.health.addReadyCheck(`ring ${ring.member.identity}`, () =>
          ring.member.fence.aborted
            ? { ok: false, reason: `ring member ${ring.member.identity} is fenced` }
            : { ok: true },
        );
      }
      this.health.addHealthCheck(`controller ${controller.name} workers`, () => {
        const stuck = controller.stuckReconciles();
        return stuck.length === 0
          ? { ok: true }
          : {
              ok: false,
              reason: `controller ${controller.name}: ${stuck.map((s) => `${s.key} running ${Math.round(s.runningMs)} ms`).join(", ")} past the reconcile timeout`,
            };
      });
    }
    // Caches of unsharded controllers first: a reconcile must not see a partial cache.
    await factory.requireSync(signal, config.cache.syncTimeoutMs);
    await Promise.all(
      built.map(({ controller, ring }) => (ring ? Promise.resolve(true) : controller.waitForSync(signal))),
    );
    if (signal.aborted) return;
    logger.info("manager: caches synced", { controllers: built.map((b) => b.controller.name) });

    const leaderControllers = built.filter((b) => b.mode === "leader");
    for (const { controller, ring } of built.filter((b) => b.mode !== "leader")) {
      watch(
        `controller ${controller.name}`,
        controller.work(signal, ring ? { abortInFlight: ring.fenced } : {}),
      );
    }
    const leaderRunnables = this.runnables().filter((r) => r.needsLeader);
    for (const { runnable, name } of this.runnables().filter((r) => !r.needsLeader)) {
      watch(name, runnable.run(signal));
    }
    this.synced = true;
    for (const done of [...this.syncWaiters]) done(true);
    if (leaderControllers.length === 0 && leaderRunnables.length === 0) return;
    const lease = config.leaderElection.leaseName;
    // The Lease outlives the leader's work: on shutdown the elector keeps renewing until the
    // leader controllers have drained, then releases. Stopping it with the manager's signal
    // would stop renewals while reconciles still run, and a standby could take over mid-reconcile.
    const electorStop = new AbortController();
    let leaderWork: Promise<unknown> = Promise.resolve();
    const onShutdown = () => void leaderWork.finally(() => electorStop.abort(signal.reason));
    if (signal.aborted) onShutdown();
    else signal.addEventListener("abort", onShutdown, { once: true });
    const elector = new LeaderElector({
      ...this.instrumentation(),
      lock: new LeaseLock({
        kubeConfig: this.get(Tokens.KubeConfig),
        namespace: config.namespace,
        name: lease,
        identity: config.identity,
        meter: this.get(Tokens.Meter),
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
          // Work stops when leadership ends or the manager stops, whichever comes first. On a
          // shutdown the elector renews until the work has drained, so `leading` aborts while
          // reconciles run only when leadership was lost: a standby may take over within
          // leaseDuration - renewDeadline, so they are aborted at once rather than drained.
          const working = AbortSignal.any([leading, signal]);
          leaderWork = Promise.all([
            ...leaderControllers.map(({ controller }) =>
              controller.work(working, { abortInFlight: leading }),
            ),
            ...leaderRunnables.map(({ runnable, name }) =>
              runnable.run(working).catch((error: unknown) => {
                logger.error(`${name} failed; stopping the manager`, { error });
                fail(error);
              }),
            ),
          ]);
          await leaderWork;
        },
        onStoppedLeading: () => {
          if (!signal.aborted)
            fail(new LeaderElectionLostError(`${config.namespace}/${lease}`, "renewal failed"));
        },
      },
    });
    this.health.addHealthCheck("leader election", () => {
      const h = elector.health();
      return h.healthy ? { ok: true } : { ok: false, reason: h.reason ?? "unhealthy" };
    });
    watch("leader election", elector.run(electorStop.signal));
  }

  /** The probe and metrics servers, as configured: they run from start to stop, leader or not. */
  private startupRunnables(): Array<{ name: string; run: (signal: AbortSignal) => Promise<unknown> }> {
    const logger = withFields(this.get(Tokens.Logger), { component: "endpoints" });
    const health = parseBindAddress(this.config.healthBindAddress, "healthBindAddress");
    const metrics = parseBindAddress(this.config.metricsBindAddress, "metricsBindAddress");
    if (health) {
      const probe =
        (kind: "healthz" | "readyz") => async (_req: IncomingMessage, res: ServerResponse, url: URL) => {
          const only = url.pathname.slice(kind.length + 2) || undefined;
          const answer = await this.health.probe(kind, {
            verbose: url.searchParams.has("verbose"),
            ...(only !== undefined ? { only: decodeURIComponent(only) } : {}),
          });
          res.writeHead(answer.status, { "Content-Type": "text/plain; charset=utf-8" }).end(answer.body);
        };
      this.servers.health = new EndpointServer({
        name: "health probes",
        address: health,
        logger,
        routes: new Map([
          ["/healthz", probe("healthz")],
          ["/readyz", probe("readyz")],
        ]),
      });
    }
    if (metrics) {
      const prometheus = this.get(Tokens.Metrics);
      this.servers.metrics = new EndpointServer({
        name: "metrics",
        address: metrics,
        logger,
        ...this.metricsServing(metrics, logger),
        routes: new Map([
          [
            "/metrics",
            this.metricsFilter(logger)((req: IncomingMessage, res: ServerResponse) =>
              prometheus.handle(req, res),
            ),
          ],
        ]),
      });
    }
    return Object.entries(this.servers).map(([name, server]) => ({
      name: `${name} server`,
      run: (signal: AbortSignal) => server.run(signal),
    }));
  }

  /** The metrics server's certificate when `config.metrics.secure`: the files given, else a self-signed one. */
  private metricsServing(address: BindAddress, logger: Logger): { tls?: ServingCertificate } {
    const { secure, certFile, keyFile } = this.config.metrics;
    if (!secure) return {};
    if (certFile !== undefined && keyFile !== undefined) {
      return { tls: readServingCertificate(certFile, keyFile) };
    }
    const bound =
      address.host !== undefined && !["0.0.0.0", "::"].includes(address.host) ? [address.host] : [];
    const hosts = [...new Set(["localhost", "127.0.0.1", "::1", hostname(), ...bound])];
    logger.info(
      "metrics: serving a self-signed certificate; give metrics.certFile and keyFile to use your own",
      {
        hosts,
      },
    );
    return { tls: selfSignedCertificate({ hosts, clock: this.get(Tokens.Clock) }) };
  }

  /** Authentication and authorization of scrapes through the API server when `config.metrics.auth`. */
  private metricsFilter(logger: Logger): (handler: EndpointHandler) => EndpointHandler {
    if (!this.config.metrics.auth) return (handler) => handler;
    if (!this.config.metrics.secure) {
      logger.warn(
        "metrics: auth is on without secure: scrapers' bearer tokens cross the network in clear text",
      );
    }
    // The API client's own connection and credentials: the operator's service account reviews.
    const transport = this.get(Transport);
    const clock = this.get(Tokens.Clock);
    const authenticator = new TokenReviewAuthenticator({ transport, clock });
    const authorizer = new SubjectAccessReviewAuthorizer({ transport, clock });
    return (handler) => withAuthenticationAndAuthorization(handler, { authenticator, authorizer, logger });
  }

  private runnables(): Array<{ runnable: Runnable<unknown>; needsLeader: boolean; name: string }> {
    return this.pendingRunnables.map((pending) => {
      if (pending.type === "instance") {
        return {
          runnable: pending.runnable,
          needsLeader: pending.needsLeader,
          name: runnableName(pending.runnable),
        };
      }
      const runnable = this.container.get<ManagedRunnable>(
        pending.plugin as ServiceIdentifier<ManagedRunnable>,
      );
      return { runnable, needsLeader: runnable.needsLeader ?? true, name: pending.plugin.name };
    });
  }

  private async buildControllers(signal: AbortSignal): Promise<BuiltController[]> {
    const built: BuiltController[] = [];
    const names = new Set<string>();
    for (const pending of this.pendingControllers) {
      let definition: AnyDefinition;
      let reconciler: Reconciler<KubeObject>;
      if (pending.type === "class") {
        const instance = this.container.get<ReconcilerPlugin<KubeObject>>(
          pending.plugin as ServiceIdentifier<ReconcilerPlugin<KubeObject>>,
        );
        definition = instance.controller(new ControllerBuilder()).build();
        reconciler = instance;
      } else {
        ({ definition, reconciler } = pending);
      }
      if (names.has(definition.name)) {
        throw new Error(
          `two controllers are named "${definition.name}": name one with .named("...") in its declaration`,
        );
      }
      names.add(definition.name);
      built.push(await this.buildController(definition, reconciler, signal));
    }
    return built;
  }

  private async buildController(
    definition: AnyDefinition,
    reconciler: Reconciler<KubeObject>,
    signal: AbortSignal,
  ): Promise<BuiltController> {
    const config = this.config;
    const mode = controllerMode(config, definition);
    const overrides = config.controllers[definition.name] ?? {};
    const primaryResource = await this.resolve(definition.for, signal);
    const factory = this.get(Tokens.InformerFactory);
    let ring: ControllerRing<KubeObject> | undefined;
    let primary: SharedIndexInformer<KubeObject>;
    const ringName = `${config.sharding.ring}-${definition.name}`;
    if (mode === "sharded") {
      ring = new ControllerRing({
        ...this.instrumentation(),
        kubeConfig: this.get(Tokens.KubeConfig),
        namespace: config.namespace,
        ring: ringName,
        identity: config.identity,
        resource: primaryResource,
        slots: config.sharding.slots,
        compression: config.compression,
        wire: config.wire,
        durations: {
          leaseDurationMs: config.leaderElection.leaseDurationMs,
          renewDeadlineMs: config.leaderElection.renewDeadlineMs,
          retryPeriodMs: config.leaderElection.retryPeriodMs,
        },
      });
      primary = ring.informer;
    } else {
      primary = factory.informerFor(primaryResource);
    }
    const sources: ControllerSource[] = [
      { informer: primary, toRequests: enqueueForObject(), predicates: definition.predicates },
    ];
    for (const secondary of definition.watches) {
      const resource = await this.resolve(secondary.kind, signal);
      sources.push({
        informer: factory.informerFor(resource),
        toRequests:
          secondary.map.type === "owner" ? enqueueForOwner(primaryResource) : secondary.map.toRequests,
        predicates: secondary.predicates,
      });
    }
    const controller = new Controller<KubeObject>({
      ...this.instrumentation(),
      name: definition.name,
      primary,
      sources,
      reconciler,
      concurrency: overrides.concurrency ?? definition.options.concurrency ?? 1,
      reconcileTimeoutMs: overrides.reconcileTimeoutMs ?? definition.options.reconcileTimeoutMs ?? 0,
      drainTimeoutMs: config.shutdown.drainTimeoutMs,
      ...(definition.options.rateLimiter ? { rateLimiter: definition.options.rateLimiter } : {}),
      ...(ring ? { admit: ring.admit, track: (key: string) => ring.track(key) } : {}),
    });
    if (ring) {
      const backlog = new RingBacklogMetrics(
        this.get(Tokens.Meter),
        ringName,
        config.identity,
        controller.queue,
      );
      this.closers.push(() => backlog.close());
    }
    return { controller, mode, ring };
  }

  private async resolve(kind: Kind, signal: AbortSignal): Promise<Resource> {
    if (isResource(kind)) return kind;
    return this.get(Tokens.RestMapper).resourceFor(kind, { signal });
  }

  private bindClass(plugin: PluginClass<object, never[]>): void {
    const id = plugin as unknown as ServiceIdentifier<object>;
    if (this.container.isBound(id)) return;
    const tokens = plugin.inject;
    if (tokens !== undefined) {
      if (!Array.isArray(tokens)) throw new TypeError(`${plugin.name}.inject must be an array of tokens`);
      this.container
        .bind(id)
        .toDynamicValue((context) => new plugin(...tokens.map((t: symbol) => context.get<never>(t))))
        .inSingletonScope();
      return;
    }
    if (plugin.length > 0) {
      // Without `static inject` inversify needs its own decorator metadata; say how to give it either way.
      this.container.bind(id).toSelf().inSingletonScope();
      return;
    }
    this.container
      .bind(id)
      .toDynamicValue(() => new plugin())
      .inSingletonScope();
  }

  private instrumentation() {
    return {
      clock: this.get(Tokens.Clock),
      random: this.get(Tokens.Random),
      logger: this.get(Tokens.Logger),
      meter: this.get(Tokens.Meter),
      tracer: this.get(Tokens.Tracer),
    };
  }

  private assertNew(what: string): void {
    if (this.state !== "new") {
      throw new Error(
        `manager.${what}(): the manager has ${this.state === "running" ? "started" : "stopped"}; register and configure before run()`,
      );
    }
  }
}

function runnableName(runnable: Runnable<unknown>): string {
  const name = (runnable as { name?: unknown }).name;
  return typeof name === "string" ? name : (runnable.constructor?.name ?? "runnable");
}
