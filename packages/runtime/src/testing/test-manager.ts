import { Container } from "inversify";
import { defaultRandom, toError, withFields } from "@tessera/core";
import { CapturingLogger, FakeClock } from "@tessera/core/testing";
import { SharedInformerFactory, stripManagedFields } from "@tessera/informers";
import {
  describeResource,
  KindNotFoundError,
  type KubeObject,
  type Resource,
  type RestMapper,
} from "@tessera/client";
import { CachedClient } from "../client/cached-client.js";
import { DeclaredCaches } from "../client/declared-caches.js";
import { loadConfig } from "../config/load-config.js";
import type { ManagerConfigInput } from "../config/manager-config.js";
import { ControllerFactory, type BuiltController } from "../manager/controller-factory.js";
import { Caches, Sharded } from "../manager/default-bindings.js";
import { ShardedKinds } from "../manager/sharded-kinds.js";
import { PluginRegistry, type ControllerDeclaration } from "../plugin/plugin-registry.js";
import type { PluginClass, ReconcilerPlugin } from "../plugin/plugin.js";
import { Tokens, type Token } from "../plugin/tokens.js";
import type { Reconciler } from "../reconcile/reconciler.js";
import type { Request } from "../reconcile/request.js";
import type { Result } from "../reconcile/result.js";
import { CapturingEventRecorder, type RecordedEvent } from "./capturing-event-recorder.js";
import { FakeClient } from "./fake-client.js";
import { FakeListerWatcher } from "./fake-lister-watcher.js";
import { bindProvided, bindTestServices } from "./test-bindings.js";

/** A reconciler class, as `manager.register` takes it (its `inject` is checked against the bindings at start). */
export type ReconcilerClass = (new (...args: never[]) => ReconcilerPlugin<never>) & {
  readonly inject?: readonly unknown[];
};

/** Options of {@link testManager}. */
export interface TestManagerOptions {
  /** The reconciler classes to run, as `manager.register` takes them. */
  register: readonly ReconcilerClass[];
  /** Objects in the fake before the controllers start (each with its `apiVersion` and `kind`). */
  objects?: readonly KubeObject[];
  /** The custom resources the fake serves. */
  resources?: readonly Resource[];
  /** The fake to use instead of a new one (give it the same clock). */
  client?: FakeClient;
  /** Default a new `FakeClock`. */
  clock?: FakeClock;
  /** Default a new `CapturingLogger`. */
  logger?: CapturingLogger;
  /** Further bindings the reconcilers inject (`[token, value]`); they win over the test manager's. */
  provide?: readonly (readonly [Token<unknown>, unknown])[];
  /**
   * Manager configuration, as `Manager.create({ config })` takes it (a
   * controller's `concurrency`, `cache.namespaces`, ...). Every controller
   * runs in `every-replica` mode whatever it declares: the test manager is
   * the one replica, leading and holding every slot.
   */
  config?: ManagerConfigInput;
}

/** Options of {@link TestManager.settle}. */
export interface SettleOptions {
  /**
   * Also move the fake clock to each timer while a reconcile waits on one
   * (a `requeueAfterMs`, a retry's backoff, a sleep on the clock), until
   * none waits. Default false: only what is due now runs.
   */
  advance?: boolean;
  /** With `advance`: fail if reconciles still wait after this much fake time; default 1 h. */
  limitMs?: number;
}

/** One reconcile (or cleanup) the controllers ran, in order. */
export interface ReconcileRecord {
  readonly controller: string;
  readonly request: Request;
  /** `cleanup`: the object was being deleted and the controller's managed finalizer ran the cleanup. */
  readonly method: "reconcile" | "cleanup";
  readonly attempt: number;
  /** The fake clock's `now()` as it started. */
  readonly at: number;
  /** What it returned; absent when it threw. */
  readonly result?: Result | void;
  /** What it threw. */
  readonly error?: unknown;
}

/** Event-loop turns without any change after which a busy controller is taken to wait on a timer or real I/O. */
const STUCK_TURNS = 200;
const DEFAULT_LIMIT_MS = 60 * 60 * 1000;

/**
 * Runs `options.register`'s reconcilers as the manager runs them, in
 * memory: see {@link TestManager}. Resolves once every cache synced, with
 * the objects given queued; nothing is reconciled before the first
 * `settle()` or `advance(ms)`, so interceptors installed meanwhile see every call.
 *
 * ```ts
 * const env = await testManager({ register: [WidgetReconciler], resources: [Widgets], objects: [widget] });
 * await env.settle();
 * // ... env.client.peek(ConfigMaps, ref) ...
 * await env.stop();
 * ```
 */
export async function testManager(options: TestManagerOptions): Promise<TestManager> {
  const manager = new TestManager(options);
  try {
    await manager.start();
  } catch (error) {
    await manager.stop();
    throw error;
  }
  return manager;
}

/**
 * The manager's controllers on a {@link FakeClient}, on a fake clock: the
 * same `ControllerFactory`, `Controller`, work queue, rate limiter, shared
 * informers (fed by the fake's watch, `managedFields` stripped), cached
 * client, predicates, `owns` and `watches` mappings (async ones with their
 * `MapContext`), triggers and managed finalizers as in production. Nothing
 * waits for real time: {@link TestManager.settle} runs what is due,
 * {@link TestManager.advance} moves the clock.
 *
 * What it does not model, beyond what the {@link FakeClient} does not:
 * - leader election and sharding: every controller runs as on the one
 *   replica of `every-replica` mode;
 * - garbage collection: an owner's deletion leaves its dependents (delete
 *   them in the test, as the garbage collector would);
 * - other controllers (a Deployment never gets Pods): the test writes what
 *   they would;
 * - the probe, metrics and webhook servers, and registered runnables;
 * - watch failures and relists (the fake's watch never breaks), and bookmarks;
 * - field selectors on the caches other than `metadata.name` and `metadata.namespace`.
 *
 * Interceptors of the fake take the reconcilers' and mappers' client calls;
 * the informers' watches go past them.
 */
export class TestManager {
  /** The fake every read (through the caches) and write goes to; write to it to change the world. */
  readonly client: FakeClient;
  readonly clock: FakeClock;
  readonly logger: CapturingLogger;
  /** The reconciles (and cleanups) run so far, in the order they finished. */
  readonly reconciles: ReconcileRecord[] = [];
  private readonly recorder = new CapturingEventRecorder();
  private readonly container = new Container();
  private readonly registry: PluginRegistry;
  private readonly stopping = new AbortController();
  private readonly running: Promise<unknown>[] = [];
  private readonly failures: unknown[] = [];
  private built: readonly BuiltController[] = [];
  private factory: SharedInformerFactory | undefined;
  private stopped = false;
  private working = false;
  private readonly listerWatchers: FakeListerWatcher[] = [];

  /** Use {@link testManager}, which also starts it. */
  constructor(private readonly options: TestManagerOptions) {
    this.clock = options.clock ?? new FakeClock();
    this.logger = options.logger ?? new CapturingLogger();
    this.client =
      options.client ??
      new FakeClient({
        resources: options.resources ?? [],
        objects: options.objects ?? [],
        clock: this.clock,
      });
    if (options.client) for (const object of options.objects ?? []) this.client.seed(object);
    this.registry = new PluginRegistry(this.container);
    for (const plugin of options.register) {
      this.registry.addClass(plugin as unknown as PluginClass<object, never[]>);
    }
  }

  /** The Events the reconcilers recorded, in order. */
  get events(): readonly RecordedEvent[] {
    return this.recorder.events;
  }

  /** @internal Builds and starts the controllers; {@link testManager} calls it. */
  async start(): Promise<void> {
    const user = this.options.config ?? {};
    const config = loadConfig({
      config: {
        ...user,
        name: user.name ?? "test-manager",
        mode: "every-replica",
        healthBindAddress: "0",
        metricsBindAddress: "0",
        // The one replica: no controller's mode from configuration (nor its declaration, below).
        controllers: Object.fromEntries(
          Object.entries(user.controllers ?? {}).map(([name, { mode: _mode, ...rest } = {}]) => [name, rest]),
        ),
      },
      env: {},
    });
    const { client, clock, logger, container } = this;
    bindTestServices(container, { client, clock, logger, recorder: this.recorder });
    const factory = new SharedInformerFactory({
      listerWatcherFor: (request) => {
        if (!client.resourceFor(request.resource)) {
          throw new TypeError(
            `testManager: the fake serves no ${describeResource(request.resource)}; give its handle in options.resources`,
          );
        }
        const listerWatcher = new FakeListerWatcher(client, request, clock);
        this.listerWatchers.push(listerWatcher);
        return listerWatcher;
      },
      transform: stripManagedFields,
      clock,
      random: defaultRandom,
      logger: withFields(logger, { component: "informers" }),
      meter: container.get(Tokens.Meter),
    });
    this.factory = factory;
    const caches = new DeclaredCaches(withFields(logger, { component: "caches" }));
    const rebind = <T>(token: Token<T>, value: T): void => {
      if (container.isBound(token)) container.unbind(token);
      container.bind<T>(token).toConstantValue(value);
    };
    rebind(Tokens.Config, config);
    rebind(Tokens.InformerFactory, factory);
    rebind(Caches, caches);
    rebind(Sharded, new ShardedKinds(logger));
    rebind(Tokens.Client, new CachedClient(factory, client, { caches, lazy: config.cache.lazy }));
    rebind(Tokens.RestMapper, fakeRestMapper(client));
    bindProvided(container, this.options.provide ?? []);
    this.registry.checkInjections();
    const declarations = [...this.registry.controllerDeclarations()];
    if (declarations.length === 0) {
      throw new TypeError(
        "testManager: register declares no controller; pass reconciler classes in register",
      );
    }

    const signal = this.stopping.signal;
    this.built = await new ControllerFactory(container, config, () => {}).build(
      declarations.map((d) => this.recorded(d)),
      signal,
    );
    this.watch(factory.run(signal));
    for (const { controller } of this.built) controller.watch(signal);
    await factory.requireSync(signal);
    await Promise.all(this.built.map(({ controller }) => controller.waitForSync(signal)));
  }

  /** The workers start with the first settle or advance, so a test can intercept calls before any reconcile. */
  private work(): void {
    if (this.working || this.stopped) return;
    this.working = true;
    for (const { controller } of this.built) this.watch(controller.work(this.stopping.signal));
  }

  /**
   * Runs reconciles until every controller is idle: no event waiting to be
   * mapped, no request queued or being reconciled. Writes of the
   * reconciles reach the informers and queue what they map to, as on a
   * cluster, so one `settle` takes a change through every reconcile it
   * causes. Requests waiting on the clock (a `requeueAfterMs`, a retry's
   * backoff) are left waiting unless `advance` is set: then the clock moves
   * to each such timer in turn (firing every timer on the way) until no
   * request waits, and fails after `limitMs` of fake time (a reconciler
   * that always requeues never settles; use {@link TestManager.advance}).
   * Fails when a busy controller stops moving without `advance` (a
   * reconcile or an interceptor waiting on the clock), and with what a
   * controller's run threw.
   */
  async settle(options: SettleOptions = {}): Promise<void> {
    this.work();
    const limitMs = options.limitMs ?? DEFAULT_LIMIT_MS;
    const start = this.clock.now();
    for (;;) {
      const idle = await this.quiesce();
      this.rethrow();
      const waiting = this.built.some(({ controller }) => controller.queue.stats().delayed > 0);
      if (idle && !waiting) return;
      if (!options.advance) {
        if (idle) return;
        throw new Error(
          `testManager.settle(): ${this.busy()} and nothing moves: it waits on the clock (a sleep, an interceptor's delay); settle({ advance: true }) or advance(ms) moves it`,
        );
      }
      const due = this.clock.nextTimerDue();
      if (due === undefined) {
        throw new Error(
          `testManager.settle(): ${this.busy()} and waits on something no timer ends (real I/O?)`,
        );
      }
      if (due - start > limitMs) {
        throw new Error(
          `testManager.settle({ advance: true }): requests still wait after ${limitMs} ms of fake time (${this.busy()}): a reconciler that always requeues never settles; use advance(ms), or raise limitMs`,
        );
      }
      this.clock.advanceSync(due - this.clock.now());
    }
  }

  /**
   * Moves the fake clock forward by `ms`, firing each timer on the way at
   * its own instant and settling after it (requeues, retries, resyncs and
   * triggers on the clock run in order), and settles at the end. A
   * reconcile still waiting on a later timer is left waiting.
   */
  async advance(ms: number): Promise<void> {
    this.work();
    const target = this.clock.now() + Math.max(0, ms);
    for (;;) {
      await this.quiesce();
      this.rethrow();
      const due = this.clock.nextTimerDue();
      if (due === undefined || due > target) break;
      this.clock.advanceSync(due - this.clock.now());
    }
    this.clock.advanceSync(target - this.clock.now());
    await this.quiesce();
    this.rethrow();
  }

  /** Queues a reconcile as `manager.enqueue` does (then {@link TestManager.settle}). */
  enqueue(controller: string, request: Request): boolean {
    return this.controller(controller).enqueue(request);
  }

  /** Queues every cached primary object of `controller`, as `manager.reconcileAll` does. */
  reconcileAll(controller: string): number {
    return this.controller(controller).reconcileAll();
  }

  /** Stops the controllers and informers; reconciles in flight are given the drain timeout on the fake clock. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.stopping.abort(new Error("the test manager stopped"));
    let done = false;
    const all = Promise.allSettled(this.running).then(() => (done = true));
    for (let turn = 0; turn < STUCK_TURNS && !done; turn++) await nextTurn();
    // A reconcile stuck on the fake clock: let the drain timeout pass.
    if (!done) this.clock.advanceSync(60 * 60 * 1000);
    await all;
    for (const { controller } of this.built) controller.close();
    for (const listerWatcher of this.listerWatchers) listerWatcher.close();
  }

  private controller(name: string) {
    const found = this.built.find((b) => b.controller.name === name);
    if (!found) {
      throw new Error(
        `testManager: no controller is named "${name}"; it runs ${this.built.map((b) => `"${b.controller.name}"`).join(", ")}`,
      );
    }
    return found.controller;
  }

  /** The declaration with its reconciler recorded into {@link TestManager.reconciles}. */
  private recorded({ definition, reconciler }: ControllerDeclaration): ControllerDeclaration {
    const record = async (
      method: ReconcileRecord["method"],
      request: Request,
      attempt: number,
      run: () => Result | void | Promise<Result | void>,
    ) => {
      const at = this.clock.now();
      const base = { controller: definition.name, request, method, attempt, at };
      try {
        const result = await run();
        this.reconciles.push({ ...base, result });
        return result;
      } catch (error) {
        this.reconciles.push({ ...base, error });
        throw error;
      }
    };
    const wrapped: Reconciler<KubeObject> = {
      reconcile: (request, ctx) =>
        record("reconcile", request, ctx.attempt, () => reconciler.reconcile(request, ctx)),
      ...(reconciler.cleanup
        ? {
            cleanup: (object: KubeObject, ctx: Parameters<NonNullable<Reconciler["cleanup"]>>[1]) =>
              record(
                "cleanup",
                requestOf(object),
                ctx.attempt,
                () => reconciler.cleanup!(object, ctx) as Result,
              ),
          }
        : {}),
      ...(reconciler.onError
        ? { onError: (error, object, ctx) => reconciler.onError!(error, object, ctx) }
        : {}),
    } as Reconciler<KubeObject>;
    const every = { ...definition, options: { ...definition.options, mode: "every-replica" as const } };
    return { definition: every, reconciler: wrapped };
  }

  /**
   * Turns of the event loop until every controller is idle (true), or until
   * nothing has changed for {@link STUCK_TURNS} turns while one is busy
   * (false: it waits on a timer, or on real I/O).
   */
  private async quiesce(): Promise<boolean> {
    let last = "";
    let still = 0;
    for (;;) {
      await nextTurn();
      if (this.idle()) {
        // Once more: a turn may have started what the check could not see yet.
        await nextTurn();
        if (this.idle()) return true;
      }
      const now = this.signature();
      still = now === last ? still + 1 : 0;
      last = now;
      if (still >= STUCK_TURNS) return false;
    }
  }

  private idle(): boolean {
    return this.built.every(({ controller }) => {
      const stats = controller.queue.stats();
      return (
        stats.ready === 0 &&
        stats.processing === 0 &&
        controller.inFlight === 0 &&
        controller.pendingEvents === 0
      );
    });
  }

  /** What changes while anything progresses. */
  private signature(): string {
    return JSON.stringify([
      this.client.resourceVersion,
      this.reconciles.length,
      this.built.map(({ controller }) => [controller.queue.stats(), controller.pendingEvents]),
    ]);
  }

  private busy(): string {
    return this.built
      .map(({ controller }) => {
        const s = controller.queue.stats();
        return `controller ${controller.name}: ${controller.inFlight} reconciling, ${s.ready} queued, ${s.delayed} waiting on the clock, ${controller.pendingEvents} events to map`;
      })
      .join("; ");
  }

  private watch(promise: Promise<unknown>): void {
    this.running.push(promise.catch((error: unknown) => this.failures.push(error)));
  }

  private rethrow(): void {
    const failure = this.failures.shift();
    if (failure !== undefined) throw toError(failure);
  }
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function requestOf(object: KubeObject): Request {
  return { name: object.metadata?.name ?? "", namespace: object.metadata?.namespace ?? "" };
}

/** Kinds by group, version and kind, from what the fake serves; others fail as discovery fails them. */
function fakeRestMapper(client: FakeClient): RestMapper {
  return {
    resourceFor: <T extends KubeObject>(gvk: Parameters<RestMapper["resourceFor"]>[0]) => {
      const resource = client.resourceFor(gvk);
      if (resource) return Promise.resolve(resource as Resource<T>);
      return Promise.reject(
        new KindNotFoundError(
          gvk,
          "the fake client serves no such kind; give its handle in testManager's resources",
        ),
      );
    },
  };
}
