import type { Container } from "inversify";
import type { SharedIndexInformer } from "@tessera/informers";
import type { KubeObject, Resource } from "@tessera/client";
import { ShardedWorkload } from "@tessera/sharding";
import type { ControllerDefinition } from "../builder/controller-builder.js";
import { isResource, type Kind } from "../builder/kind.js";
import type { ManagerConfig } from "../config/manager-config.js";
import { enqueueForObject, enqueueForOwner } from "../handler/event-handler.js";
import type { ControllerDeclaration } from "../plugin/plugin-registry.js";
import { Tokens, type Token } from "../plugin/tokens.js";
import { Controller, type ControllerSource } from "../reconcile/controller.js";
import type { Reconciler } from "../reconcile/reconciler.js";
import { containerInstrumentation } from "./container-instrumentation.js";
import { controllerMode } from "./controller-mode.js";
import { RingBacklogMetrics } from "./ring-backlog-metrics.js";

/** A controller ready to run: its mode and, when sharded, its share of the ring. */
export interface BuiltController {
  readonly controller: Controller<KubeObject>;
  readonly mode: ManagerConfig["mode"];
  readonly ring: ShardedWorkload<KubeObject> | undefined;
}

type AnyDefinition = ControllerDefinition<KubeObject>;

/**
 * Builds the manager's controllers from their declarations: resolves each
 * kind (a Resource, or a GroupVersionKind through the RestMapper), takes the
 * primary informer from the shared factory or, in `sharded` mode, from a
 * {@link ShardedWorkload} in the ring `<sharding.ring>-<controller>`, and
 * wires the sources (`for`, `owns`, `watches`).
 */
export class ControllerFactory {
  constructor(
    private readonly container: Container,
    private readonly config: ManagerConfig,
    /** Takes what to release once the manager stopped (the ring's backlog gauges). */
    private readonly onStop: (close: () => void) => void,
  ) {}

  /** One controller per declaration, in order; throws when two share a name. */
  async build(
    declarations: Iterable<ControllerDeclaration>,
    signal: AbortSignal,
  ): Promise<BuiltController[]> {
    const built: BuiltController[] = [];
    const names = new Set<string>();
    for (const { definition, reconciler } of declarations) {
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
    const ring = mode === "sharded" ? this.ring(definition.name, primaryResource) : undefined;
    const primary = ring?.informer ?? this.get(Tokens.InformerFactory).informerFor(primaryResource);
    const controller = new Controller<KubeObject>({
      ...containerInstrumentation(this.container),
      name: definition.name,
      primary,
      sources: await this.sources(definition, primary, primaryResource, signal),
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
        this.ringName(definition.name),
        config.identity,
        controller.queue,
      );
      this.onStop(() => backlog.close());
    }
    return { controller, mode, ring };
  }

  /** The primary informer's source, then one per `owns` and `watches` kind. */
  private async sources(
    definition: AnyDefinition,
    primary: SharedIndexInformer<KubeObject>,
    primaryResource: Resource,
    signal: AbortSignal,
  ): Promise<ControllerSource[]> {
    const factory = this.get(Tokens.InformerFactory);
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
    return sources;
  }

  /** This replica's share of the controller's ring. */
  private ring(controller: string, resource: Resource): ShardedWorkload<KubeObject> {
    const config = this.config;
    return new ShardedWorkload({
      ...containerInstrumentation(this.container),
      kubeConfig: this.get(Tokens.KubeConfig),
      namespace: config.namespace,
      ring: this.ringName(controller),
      identity: config.identity,
      resource,
      slots: config.sharding.slots,
      compression: config.compression,
      wire: config.wire,
      durations: {
        leaseDurationMs: config.leaderElection.leaseDurationMs,
        renewDeadlineMs: config.leaderElection.renewDeadlineMs,
        retryPeriodMs: config.leaderElection.retryPeriodMs,
      },
    });
  }

  private ringName(controller: string): string {
    return `${this.config.sharding.ring}-${controller}`;
  }

  private async resolve(kind: Kind, signal: AbortSignal): Promise<Resource> {
    if (isResource(kind)) return kind;
    return this.get(Tokens.RestMapper).resourceFor(kind, { signal });
  }

  private get<T>(token: Token<T>): T {
    return this.container.get<T>(token);
  }
}
