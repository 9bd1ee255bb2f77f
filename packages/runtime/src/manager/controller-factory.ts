import type { Container } from "inversify";
import {
  composeTransforms,
  stripManagedFields,
  type SharedIndexInformer,
  type Transform,
} from "@tessera/informers";
import { labelSelectorString, type KubeObject, type Resource } from "@tessera/client";
import { ShardedWorkload, type UnlabelledObject } from "@tessera/sharding";
import type { ControllerDefinition } from "../builder/controller-builder.js";
import { BuilderError } from "../builder/builder-error.js";
import { fieldSelectorString, type CacheOptions } from "../builder/cache-options.js";
import { describeKind, isResource, type Kind } from "../builder/kind.js";
import type { ManagerConfig } from "../config/manager-config.js";
import { enqueueForEveryOwner, enqueueForObject, enqueueForOwner } from "../handler/event-handler.js";
import { specOrMetadataChanged } from "../predicate/predicates.js";
import type { ControllerDeclaration } from "../plugin/plugin-registry.js";
import { Tokens, type Token } from "../plugin/tokens.js";
import { Controller, type ControllerSource } from "../reconcile/controller.js";
import { ManagedFinalizer } from "../reconcile/managed-finalizer.js";
import type { Reconciler } from "../reconcile/reconciler.js";
import { CONTROLLER_OWNER_INDEX, controllerOwnerUid, RelatedObjects } from "../reconcile/related-objects.js";
import { containerInstrumentation } from "./container-instrumentation.js";
import { Caches, Sharded } from "./default-bindings.js";
import { controllerMode } from "./controller-mode.js";
import { unknownCacheKinds } from "./unknown-cache-kinds.js";
import { OwnerSlotMigration } from "./owner-slot-migration.js";
import { RingBacklogMetrics } from "./ring-backlog-metrics.js";

/** A controller ready to run: its mode and, when sharded, its share of the ring. */
export interface BuiltController {
  readonly controller: Controller<KubeObject>;
  readonly mode: ManagerConfig["mode"];
  readonly ring: ShardedWorkload<KubeObject> | undefined;
}

type AnyDefinition = ControllerDefinition<KubeObject>;

/** The resync floor of a controller that sets none (controller-runtime's SyncPeriod): 10 h. */
export const DEFAULT_MAX_INTERVAL_MS = 10 * 60 * 60 * 1000;

/** One informer of a declared cache and the one namespace it holds (undefined: all). */
interface ScopedInformer {
  readonly informer: SharedIndexInformer<KubeObject>;
  readonly namespace: string | undefined;
}

/** A declaration's cache options with the configuration's defaults (`cache.byKind`, `cache.namespaces`) filled in. */
interface CacheScope {
  readonly namespaces: readonly string[];
  readonly labelSelector: string | undefined;
  readonly fieldSelector: string | undefined;
  /** The `cache.byKind` entry's `compact`, if it says. */
  readonly compact: boolean | undefined;
}

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

  /** Each user transform composed after managedFields are dropped, once, so equal declarations share one informer. */
  private readonly transforms = new WeakMap<object, Transform<KubeObject>>();

  /** Every kind a declaration cached, as `cache.byKind` keys it: what an unknown key is checked against. */
  private readonly scopedKinds = new Set<string>();

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
    const unknown = unknownCacheKinds(Object.keys(this.config.cache.byKind), this.scopedKinds);
    if (unknown) this.get(Tokens.Logger).warn(unknown.message, { component: "caches", ...unknown.fields });
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
    const ring =
      mode === "sharded" ? this.ring(definition.name, primaryResource, definition.cache) : undefined;
    const primaries: readonly ScopedInformer[] = ring
      ? [{ informer: ring.informer, namespace: this.scope(primaryResource, definition.cache).namespaces[0] }]
      : this.informers(primaryResource, definition.cache);
    if (ring) {
      const factory = this.get(Tokens.InformerFactory);
      this.get(Sharded).add(primaryResource, definition.name, ring.informer, factory.informers, ring.space);
    }
    const caches = this.get(Caches);
    for (const { informer, namespace } of primaries)
      caches.add(primaryResource, informer, namespace, definition.name);
    if (definition.cache.indexes)
      caches.addIndexes(primaryResource, definition.cache.indexes, definition.name);
    const primary = (primaries[0] as ScopedInformer).informer;
    const maxIntervalMs =
      overrides.maxIntervalMs ?? definition.options.maxIntervalMs ?? DEFAULT_MAX_INTERVAL_MS;
    // The owners of owned objects found without the owner-slot label are queued once the controller exists.
    const built: { controller?: Controller<KubeObject> } = {};
    const queueOwners = (objects: readonly UnlabelledObject[]) => {
      for (const { namespace, owner } of objects)
        built.controller?.enqueue({
          namespace: primaryResource.scope === "Namespaced" ? (namespace ?? "") : "",
          name: owner.name,
        });
    };
    const { sources, owned, declared } = await this.sources(
      definition,
      primaries,
      primaryResource,
      maxIntervalMs,
      signal,
      ring && { ring, queueOwners },
    );
    const maxBackoffMs = overrides.maxBackoffMs ?? definition.options.maxBackoffMs;
    if (overrides.maxBackoffMs !== undefined && definition.options.rateLimiter !== undefined) {
      throw new Error(
        `controllers.${definition.name}.maxBackoffMs caps the default rate limiter, but controller "${definition.name}" declares a rateLimiter of its own: remove the setting and set the cap in its rateLimiter`,
      );
    }
    const reader = this.get(Tokens.Client);
    const controller = new Controller<KubeObject>({
      ...containerInstrumentation(this.container),
      name: definition.name,
      primary,
      ...(primaries.length > 1
        ? {
            current: currentIn(primaries),
            listPrimary: () => primaries.flatMap((p) => p.informer.lister.list()),
          }
        : {}),
      sources,
      triggers: definition.triggers,
      related: new RelatedObjects({ controller: definition.name, reader, owned, declared }),
      reconciler,
      reader,
      concurrency: overrides.concurrency ?? definition.options.concurrency ?? 1,
      reconcileTimeoutMs: overrides.reconcileTimeoutMs ?? definition.options.reconcileTimeoutMs ?? 0,
      drainTimeoutMs: config.shutdown.drainTimeoutMs,
      ...(definition.options.rateLimiter ? { rateLimiter: definition.options.rateLimiter } : {}),
      ...(maxBackoffMs !== undefined ? { maxBackoffMs } : {}),
      ...(definition.finalizer
        ? {
            finalizer: new ManagedFinalizer({
              name: definition.finalizer,
              resource: primaryResource,
              client: this.get(Tokens.Client),
            }),
          }
        : {}),
      ...(ring ? { admit: ring.admit, track: (key: string) => ring.track(key) } : {}),
    });
    built.controller = controller;
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

  /**
   * The primary informer's source (resynced every `maxIntervalMs`), then
   * one per `owns` and `watches` kind; a watch of the primary kind is a
   * second handler on the primary's informers. Also the resolved kinds
   * `ctx.owned` and `ctx.related` read; every owned kind's caches get the
   * owner index.
   */
  private async sources(
    definition: AnyDefinition,
    primaries: readonly ScopedInformer[],
    primaryResource: Resource,
    maxIntervalMs: number,
    signal: AbortSignal,
    sharded:
      | {
          ring: ShardedWorkload<KubeObject>;
          queueOwners: (objects: readonly UnlabelledObject[]) => void;
        }
      | undefined,
  ): Promise<{ sources: ControllerSource[]; owned: Resource[]; declared: Resource[] }> {
    const caches = this.get(Caches);
    const sources: ControllerSource[] = primaries.map(({ informer }) => ({
      informer,
      toRequests: enqueueForObject(),
      predicates:
        definition.statusUpdates === "ignore"
          ? [specOrMetadataChanged(), ...definition.predicates]
          : definition.predicates,
      resyncPeriodMs: maxIntervalMs,
    }));
    const owned: Resource[] = [];
    const declared: Resource[] = [primaryResource];
    for (const secondary of definition.watches) {
      const resource = await this.resolve(secondary.kind, signal);
      declared.push(resource);
      const map = secondary.map;
      const toRequests =
        map.type === "mapped"
          ? map.toRequests
          : map.everyOwner
            ? enqueueForEveryOwner(primaryResource)
            : enqueueForOwner(primaryResource);
      if (map.type === "mapped" && sameResource(resource, primaryResource)) {
        for (const { informer } of primaries)
          sources.push({ informer, toRequests, predicates: secondary.predicates });
        continue;
      }
      // A sharded controller's owned kinds are divided like its primary, by the owner-slot label;
      // with everyOwner they stay whole: a child of several owners (not all controllers, in
      // several slots) carries no one slot, and each member admits only the owners it holds.
      const informers =
        sharded && map.type === "owner" && !map.everyOwner
          ? [this.ownedShare(definition.name, sharded, resource, secondary.cache)]
          : this.informers(resource, secondary.cache);
      for (const { informer, namespace } of informers) {
        caches.add(resource, informer, namespace, definition.name);
        sources.push({ informer, toRequests, predicates: secondary.predicates });
      }
      if (secondary.cache.indexes) caches.addIndexes(resource, secondary.cache.indexes, definition.name);
      if (map.type === "owner") {
        caches.addIndexes(resource, { [CONTROLLER_OWNER_INDEX]: controllerOwnerUid }, definition.name);
        owned.push(resource);
      }
    }
    return { sources, owned, declared };
  }

  /** The informers of a declared cache: one per namespace it holds (one for all), from the shared factory. */
  private informers(resource: Resource, cache: CacheOptions): ScopedInformer[] {
    const factory = this.get(Tokens.InformerFactory);
    const scope = this.scope(resource, cache);
    const compact = cache.compact ?? scope.compact ?? false;
    const transform = cache.transform ? this.transformOf(cache.transform) : undefined;
    const namespaces = scope.namespaces.length > 0 ? scope.namespaces : [undefined];
    return namespaces.map((namespace) => ({
      namespace,
      informer: factory.informerFor(resource, {
        namespace: namespace ?? "",
        ...(scope.labelSelector ? { labelSelector: scope.labelSelector } : {}),
        ...(scope.fieldSelector ? { fieldSelector: scope.fieldSelector } : {}),
        ...(cache.metadataOnly ? { metadataOnly: true } : {}),
        ...(transform ? { transform } : {}),
        compact,
      }),
    }));
  }

  /**
   * This replica's share of a kind a sharded controller owns: the objects
   * whose owner-slot label names one of the member's slots (the ring's
   * `ownedInformer`), within the declaration's namespace and selectors.
   */
  private ownedShare(
    controller: string,
    {
      ring,
      queueOwners,
    }: {
      ring: ShardedWorkload<KubeObject>;
      queueOwners: (objects: readonly UnlabelledObject[]) => void;
    },
    resource: Resource,
    cache: CacheOptions,
  ): ScopedInformer {
    const scope = this.scope(resource, cache);
    if (scope.namespaces.length > 1 || cache.metadataOnly) {
      throw new BuilderError(controller, [
        `owns(${describeKind(resource)}): a sharded controller's owned caches are divided by slot and hold one namespace or all${cache.metadataOnly ? ", with whole objects (not metadataOnly)" : `, not ${scope.namespaces.join(", ")}`}; run one controller per namespace, or cache all`,
      ]);
    }
    const namespace = scope.namespaces[0];
    const compact = cache.compact ?? scope.compact ?? false;
    const migration = new OwnerSlotMigration(
      this.get(Tokens.Client),
      ring.space,
      this.get(Tokens.Logger),
      queueOwners,
    );
    return {
      namespace,
      informer: ring.ownedInformer(
        resource,
        {
          ...(namespace ? { namespace } : {}),
          ...(scope.labelSelector ? { labelSelector: scope.labelSelector } : {}),
          ...(scope.fieldSelector ? { fieldSelector: scope.fieldSelector } : {}),
          ...(cache.transform ? { transform: cache.transform } : {}),
          ...(compact ? { compact } : {}),
        },
        (objects) => void migration.label(resource, objects),
      ),
    };
  }

  /**
   * What a declaration of `resource` caches: its own options, else the
   * configuration's `cache.byKind` entry of the kind, else `cache.namespaces`.
   * A cluster-scoped kind has no namespaces.
   */
  private scope(resource: Resource, cache: CacheOptions): CacheScope {
    const byKind = this.config.cache.byKind;
    const kind = `${resource.plural}${resource.group ? `.${resource.group}` : ""}`;
    this.scopedKinds.add(kind);
    const entry = byKind[kind] ?? {};
    const declared =
      cache.namespaces === undefined
        ? undefined
        : typeof cache.namespaces === "string"
          ? [cache.namespaces]
          : cache.namespaces;
    const namespaces =
      resource.scope === "Namespaced" ? (declared ?? entry.namespaces ?? this.config.cache.namespaces) : [];
    const labels = cache.labels === undefined ? entry.labels : labelSelectorString(cache.labels);
    const fields = cache.fields === undefined ? entry.fields : fieldSelectorString(cache.fields);
    return { namespaces, labelSelector: labels, fieldSelector: fields, compact: entry.compact };
  }

  private transformOf(transform: (object: KubeObject) => KubeObject): Transform<KubeObject> {
    let composed = this.transforms.get(transform);
    if (composed === undefined) {
      composed = composeTransforms(stripManagedFields, transform);
      this.transforms.set(transform, composed);
    }
    return composed;
  }

  /** This replica's share of the controller's ring. */
  private ring(controller: string, resource: Resource, cache: CacheOptions): ShardedWorkload<KubeObject> {
    const config = this.config;
    const scope = this.scope(resource, cache);
    const problems = [
      ...(scope.namespaces.length > 1
        ? [
            `for(${describeKind(resource)}): a sharded controller's primary cache holds one namespace or all, not ${scope.namespaces.join(", ")}; run one controller per namespace, or cache all`,
          ]
        : []),
      ...(cache.metadataOnly
        ? [
            `for(${describeKind(resource)}): metadataOnly is not available to the primary of a sharded controller`,
          ]
        : []),
    ];
    if (problems.length > 0) throw new BuilderError(controller, problems);
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
      cache: {
        ...(scope.namespaces[0] ? { namespace: scope.namespaces[0] } : {}),
        ...(scope.labelSelector ? { labelSelector: scope.labelSelector } : {}),
        ...(scope.fieldSelector ? { fieldSelector: scope.fieldSelector } : {}),
        ...(cache.transform ? { transform: cache.transform } : {}),
      },
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

/** `ctx.current()` of a primary cached per namespace: the informer of the key's namespace. */
function currentIn(primaries: readonly ScopedInformer[]): (key: string) => KubeObject | undefined {
  return (key) => {
    const slash = key.indexOf("/");
    const namespace = slash < 0 ? undefined : key.slice(0, slash);
    return primaries.find((p) => p.namespace === namespace)?.informer.lister.getByKey(key);
  };
}

function sameResource(a: Resource, b: Resource): boolean {
  return a.group === b.group && a.plural === b.plural;
}
