import { randomUUID } from "node:crypto";
import { SystemClock, type Clock } from "@tessera/core";
import {
  apiErrorFor,
  describeResource,
  formatKubeTime,
  labelMatcher,
  objectPath,
  objectRefOf,
  requestContext,
  applyConfigurationOwnedBy,
  type ApiErrorContext,
  type ApiReader,
  type ApplyConfiguration,
  type ApplyOptions,
  type Client,
  type DeleteOptions,
  type KubeObject,
  type ListOptions,
  type ObjectRef,
  type Patch,
  type Resource,
  type WriteOptions,
} from "@tessera/client";
import * as builtins from "@tessera/client/resources";
import {
  applyConflicts,
  applyMerge,
  changedPaths,
  isAtomicMap,
  isGranular,
  isKeyOf,
  isListEntry,
  leafPaths,
  printManager,
  printPath,
  removeAt,
  renderManagedFields,
  valueAt,
  type ListType,
  type ListTypes,
  type ManagedEntry,
} from "./field-ownership.js";
import { BUILTIN_LIST_TYPES, crdListTypes, listTypesOf } from "./list-types.js";
import { jsonCopy, jsonEqual, jsonPatch, mergePatch, PatchError, type Json } from "./json-patches.js";
import {
  InterceptorChain,
  type FakeVerb,
  type Interception,
  type InterceptMatch,
  type Interceptor,
} from "./interceptors.js";
import { serverErrors } from "./server-errors.js";
import type { IndexFunction } from "../builder/cache-options.js";
import { isResource, type Kind } from "../builder/kind.js";
import { indexNotDeclared } from "../client/index-not-declared.js";

/** Options of a {@link FakeClient}. */
export interface FakeClientOptions {
  /** The custom resources it serves, beside every built-in kind. A call on any other kind fails as on a server that does not serve it. */
  resources?: readonly Resource[];
  /** Objects it starts with (each with its `apiVersion` and `kind`), stored as if created. */
  objects?: readonly KubeObject[];
  /**
   * Custom resources whose CRD has no status subresource: their status is
   * written with the object and bumps the generation, and `updateStatus`
   * fails with 404. Default: none (every custom resource has it).
   */
  withoutStatusSubresource?: readonly Resource[];
  /**
   * Custom resources whose CRD keeps unknown fields without a structural
   * schema (`x-kubernetes-preserve-unknown-fields` at the top): there a
   * server-side apply owns the maps it declares, not only their values.
   * Default: none.
   */
  schemaless?: readonly Resource[];
  /**
   * CustomResourceDefinitions (objects as `kubectl get crd -o json` or
   * `simpleCrd` give them) whose schemas say how server-side apply merges
   * their lists: `x-kubernetes-list-type: map` with
   * `x-kubernetes-list-map-keys` (entries merged by key, each entry's fields
   * owned per manager), `set` (merged by value); every other list of a
   * custom resource is atomic. The kinds themselves are still named in
   * `resources`. Default: none.
   */
  crds?: readonly unknown[];
  /** The field manager of writes that name none; default `"tessera-fake"`. */
  fieldManager?: string;
  /** Stamps creationTimestamp, deletionTimestamp and managedFields times; default the system clock. */
  clock?: Clock;
  /**
   * Indexes per kind, as a controller declares them (`owns(kind, { indexes })`):
   * `[[Secrets, { "spec.owner": (s) => [...] }]]`. See {@link FakeClient.declareIndexes}.
   */
  indexes?: readonly (readonly [Kind<never>, Readonly<Record<string, IndexFunction<never>>>])[];
}

/** One write the fake stored (dry runs, refused writes and seeds excluded), in order. */
export interface FakeWrite {
  readonly verb: FakeVerb;
  /** The kind, e.g. `Widget`. */
  readonly kind: string;
  readonly resource: Resource;
  /** The object as stored after the write (for a delete: as it was last stored). */
  readonly object: KubeObject;
}

/** One change to the store, as a watch of its kind would deliver it. */
export interface FakeChange {
  readonly type: "ADDED" | "MODIFIED" | "DELETED";
  readonly resource: Resource;
  /** The object after the change; for a deletion, its last state at the deletion's resourceVersion. */
  readonly object: KubeObject;
}

interface Stored {
  object: Record<string, Json>;
  managed: ManagedEntry[];
}

const resourceKey = (r: Resource): string => `${r.group}/${r.version}/${r.plural}`;
const objectKey = (namespace: string | undefined, name: string): string => `${namespace ?? ""}/${name}`;

const BUILTINS: ReadonlyMap<string, Resource> = new Map(
  Object.values(builtins as Record<string, unknown>)
    .filter((r): r is Resource => typeof r === "object" && r !== null && "plural" in r && "scope" in r)
    .map((r) => [resourceKey(r), r]),
);
/** Built-in kinds whose server strategy sets and bumps `metadata.generation` on spec changes. */
const BUILTIN_GENERATION = new Set([
  "apps/v1/deployments",
  "apps/v1/replicasets",
  "apps/v1/statefulsets",
  "apps/v1/daemonsets",
  "batch/v1/jobs",
  "batch/v1/cronjobs",
  "/v1/replicationcontrollers",
  "policy/v1/poddisruptionbudgets",
  "autoscaling/v2/horizontalpodautoscalers",
  "networking.k8s.io/v1/ingresses",
  "networking.k8s.io/v1/networkpolicies",
  "apiextensions.k8s.io/v1/customresourcedefinitions",
]);
/** Built-in kinds served with a status subresource. */
const BUILTIN_STATUS = new Set([
  ...BUILTIN_GENERATION,
  "/v1/pods",
  "/v1/services",
  "/v1/nodes",
  "/v1/namespaces",
  "/v1/persistentvolumes",
  "/v1/persistentvolumeclaims",
  "/v1/resourcequotas",
  "certificates.k8s.io/v1/certificatesigningrequests",
]);
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";

/**
 * A {@link Client} that keeps objects in memory and answers as the API
 * server does, for reconciler tests that run in milliseconds. Its `reads`
 * is `"api"`, so one fake stands for the manager's client, the
 * `ApiClient` and the `ApiReader` at once: reads always see the latest write.
 *
 * What it models, checked against a real kube-apiserver by the
 * differential suite (`fake-client-parity.test.ts`):
 * - one resourceVersion counter for the whole store, as etcd's; a write that
 *   changes nothing keeps the resourceVersion;
 * - `uid` and `creationTimestamp` on create, `generateName`, name validation
 *   (DNS subdomain), `AlreadyExists`, `NotFound`;
 * - `metadata.generation`: 1 on create and bumped on a change of anything but
 *   metadata and status for custom resources (status too without a status
 *   subresource); for built-in kinds only on those the server sets it for
 *   (Deployments, Jobs, ...: not ConfigMaps or Secrets), on `spec` changes;
 *   bumped when a delete marks the object;
 * - the status subresource apart: main writes keep the stored status (create
 *   drops it), status writes change nothing else;
 * - optimistic concurrency: a write quoting a stale resourceVersion, and a
 *   delete whose preconditions fail, get `ConflictError`; an update of a
 *   custom resource without a resourceVersion is `InvalidError`, as custom
 *   resources take no unconditional update (built-in kinds do);
 * - finalizers: a delete marks (`deletionTimestamp`, generation bump), the
 *   write that removes the last finalizer removes the object;
 * - label selectors through `labelMatcher`, field selectors on
 *   `metadata.name` and `metadata.namespace` (others fail as on a custom resource);
 * - the indexes a controller declares ({@link FakeClient.declareIndexes}):
 *   on a kind that has any, `list` reads `index` and `fields` by them and
 *   fails on a missing one with the cached client's `IndexNotDeclared`;
 * - merge and JSON patch (RFC 7386, RFC 6902 with `test`); a strategic merge
 *   patch on a custom resource fails with 415 as on the server;
 * - server-side apply with field managers: maps merged; lists replaced
 *   whole, unless the list is a list-map (`x-kubernetes-list-type: map` in a
 *   CRD given in `crds`, and on built-in kinds the containers, init
 *   containers and volumes of a pod or pod template by `name`, their `env`
 *   by `name`, `ports` by port and `protocol`, `volumeMounts` by
 *   `mountPath`, a Service's `ports`): entries merged by key, in the
 *   server's order, each entry's fields owned per manager (`k:{"name":"a"}`
 *   field sets), or a set (`x-kubernetes-list-type: set`: merged by value,
 *   `v:` field sets); on every kind `metadata.finalizers` a set and
 *   `metadata.ownerReferences` a list-map by `uid` of atomic entries; a
 *   workload's `spec.selector` atomic; an updater owning the list-map or
 *   set it creates, an applier only its entries; conflicts with
 *   fields another manager set to another value (an entry's field too)
 *   unless `force`; fields, entries and set values the applier stops
 *   declaring removed when no other manager owns them; `managedFields`
 *   per manager, operation and subresource with the server's field sets
 *   (an updater owns the maps it creates, an applier their values only, or
 *   the maps too on a kind listed in `schemaless`);
 * - `dryRun`; errors of the same `ApiError` classes, codes, reasons and
 *   message shapes as the `ApiClient` against the server.
 *
 * What it does not model: admission (webhooks, policies, quotas),
 * defaulting (the server's and the CRD schema's: a defaulted key of a
 * list-map entry, as a port's `protocol: TCP`, names the entry but is not
 * written into it) and validation from the CRD schema, namespaces (objects may be
 * created in any namespace), garbage collection and propagation policies
 * (owner references are kept, dependents are not deleted), strategic merge
 * patch on built-in kinds (applied as a merge patch: lists are replaced, not
 * merged by key), in apply the list types of a CRD not given in `crds` and
 * the built-in kinds' other list-maps and atomic maps (those lists and
 * maps are merged as atomic lists and granular maps by the fake), graceful
 * deletion of Pods, pagination, and a watch
 * API of its own ({@link FakeClient.onChange} is what the test manager's
 * informers watch).
 *
 * {@link FakeClient.intercept} fails, delays or answers chosen calls.
 */
export class FakeClient implements Client, ApiReader {
  readonly reads = "api";
  /** Every write it stored, in order (seeded objects excluded). */
  readonly writes: FakeWrite[] = [];
  private readonly store = new Map<string, Map<string, Stored>>();
  private readonly known = new Map<string, Resource>(BUILTINS);
  private readonly withoutStatus: ReadonlySet<string>;
  private readonly schemaless: ReadonlySet<string>;
  /** List types by resource key, then schema path: the built-in kinds' and the CRDs'. */
  private readonly listTypeTables = new Map<string, ReadonlyMap<string, ListType>>(BUILTIN_LIST_TYPES);
  private readonly fieldManager: string;
  private readonly clock: Clock;
  private readonly interceptors = new InterceptorChain();
  /** Declared indexes by resource key, then by name. */
  private readonly indexes = new Map<string, Map<string, IndexFunction>>();
  private revision = 1000;
  private generated = 0;
  private readonly listeners = new Set<(change: FakeChange) => void>();

  constructor(options: FakeClientOptions = {}) {
    for (const r of options.resources ?? []) this.known.set(resourceKey(r), r);
    this.withoutStatus = new Set((options.withoutStatusSubresource ?? []).map(resourceKey));
    this.schemaless = new Set((options.schemaless ?? []).map(resourceKey));
    for (const crd of options.crds ?? []) this.learnCrd(crd);
    this.fieldManager = options.fieldManager ?? "tessera-fake";
    this.clock = options.clock ?? new SystemClock();
    for (const [kind, indexes] of options.indexes ?? []) this.declareIndexes(kind, indexes);
    for (const object of options.objects ?? []) this.seed(object);
  }

  /**
   * Keeps `indexes` for `kind`, as the manager's cache keeps the indexes a
   * controller declares with `for`, `owns` or `watches(kind, { indexes })`
   * (`reconcileOnce` declares the reconciler's own). A kind with indexes is
   * then read as the cached client reads it: `list(kind, { index: { name,
   * value } })` and `fields` on a path an index is named for read the index,
   * and any other index or field (but `metadata.name` and
   * `metadata.namespace`) fails with `IndexNotDeclared`. On a kind without
   * indexes, `index` fails so and `fields` are answered as the API server
   * answers them. Declaring a name again takes the same function only.
   */
  declareIndexes<T extends KubeObject>(
    kind: Kind<T>,
    indexes: Readonly<Record<string, IndexFunction<T>>>,
  ): void {
    const resource = isResource(kind) ? kind : this.resourceFor(kind);
    if (!resource) {
      throw new TypeError(
        `declareIndexes: the fake serves no ${kind.group}/${kind.version} ${kind.kind}; give its handle in the options' resources`,
      );
    }
    const key = resourceKey(resource);
    const held = this.indexes.get(key) ?? new Map<string, IndexFunction>();
    for (const [name, fn] of Object.entries(indexes)) {
      const before = held.get(name);
      if (before !== undefined && before !== (fn as IndexFunction)) {
        throw new TypeError(
          `declareIndexes: index "${name}" of ${describeResource(resource)} is declared with another function already; give one of them another name, or pass the same function`,
        );
      }
      held.set(name, fn as IndexFunction);
    }
    this.indexes.set(key, held);
  }

  /**
   * Runs the calls `match` selects through `handler` (controller-runtime's
   * interceptor funcs): `fake.intercept({ verb: "update", resource: Widgets, name: "a", times: 1 },
   * (call) => { throw serverErrors.conflict(call.context, Widgets, "a") })`.
   */
  intercept(match: InterceptMatch, handler: Interceptor): Interception {
    return this.interceptors.add(match, handler);
  }

  /**
   * The object as stored, read at once and past the interceptors: for a
   * test's own checks, which should not use up an interceptor's `times`.
   */
  peek<T extends KubeObject>(resource: Resource<T>, ref: ObjectRef): T | undefined {
    const stored = this.bucket(resource).get(objectKey(ns(resource, ref.namespace), ref.name));
    return stored ? (this.render(stored) as T) : undefined;
  }

  /**
   * Every object of `resource` as stored (all namespaces), read at once and
   * past the interceptors, in key order.
   */
  peekAll<T extends KubeObject>(resource: Resource<T>): T[] {
    return [...this.bucket(resource).entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, stored]) => this.render(stored) as T);
  }

  /** The store's resourceVersion now: that of its last write, as a LIST would answer it. */
  get resourceVersion(): string {
    return String(this.revision);
  }

  /**
   * Calls `listener`, synchronously, with every change stored from now on
   * (creates, updates, deletion marks and deletions of every kind; dry runs
   * and writes that change nothing excluded), each object at its new
   * resourceVersion: what a watch is made of (the test manager's informers
   * watch the fake through it). Returns what unsubscribes.
   */
  onChange(listener: (change: FakeChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The handle of a kind the fake serves, by group, version and kind; undefined for any other. */
  resourceFor(kind: { group: string; version: string; kind: string }): Resource | undefined {
    return [...this.known.values()].find(
      (r) => r.group === kind.group && r.version === kind.version && r.kind === kind.kind,
    );
  }

  /**
   * Stores `object` as if created (its `apiVersion` and `kind` name a kind
   * the fake serves), without counting it among the {@link FakeClient.writes}.
   */
  seed(object: KubeObject): void {
    const resource = [...this.known.values()].find(
      (r) => r.apiVersion === object.apiVersion && r.kind === object.kind,
    );
    if (!resource) {
      throw new TypeError(
        `FakeClient: no resource serves ${object.apiVersion ?? "?"} ${object.kind ?? "?"}; give its handle in options.resources`,
      );
    }
    this.doCreate(resource, object, {}, requestContext("create", resource, objectRefOf(object)));
    // A seed is the test's setup, not a write of the code under test.
    this.writes.pop();
  }

  async get<T extends KubeObject>(resource: Resource<T>, ref: ObjectRef): Promise<T | undefined> {
    const context = requestContext("get", resource, ref);
    return await this.call("get", resource, ref, [ref], context, () => {
      // The ApiClient answers undefined for any 404, an unknown resource's too.
      if (!this.serves(resource)) return undefined;
      objectPath(resource, ref);
      const stored = this.bucket(resource).get(objectKey(ns(resource, ref.namespace), ref.name));
      return stored ? (this.render(stored) as T) : undefined;
    });
  }

  async list<T extends KubeObject>(resource: Resource<T>, options: ListOptions = {}): Promise<T[]> {
    const context: ApiErrorContext = {
      verb: "list",
      resource: describeResource(resource),
      namespace: options.namespace,
    };
    return await this.call(
      "list",
      resource,
      { name: "", namespace: options.namespace },
      [options],
      context,
      () => {
        this.known404(resource, context);
        const matches = options.labels !== undefined ? labelMatcher(options.labels) : () => true;
        const fields = Object.entries(options.fields ?? {});
        // A kind with declared indexes is read as the cached client reads it, any other as the server.
        const declared = this.indexes.get(resourceKey(resource));
        const lookups: (readonly [string, string])[] = options.index
          ? [[options.index.name, options.index.value]]
          : [];
        for (const [field, value] of fields) {
          if (field === "metadata.name" || field === "metadata.namespace") continue;
          if (!declared) throw apiErrorFor(context, 400, "BadRequest", `field label not supported: ${field}`);
          lookups.push([field, value]);
        }
        const byIndex = lookups.map(([name, value]) => {
          const fn = declared?.get(name);
          if (!fn) throw indexNotDeclared(context, name);
          return (object: KubeObject) => fn(object).includes(value);
        });
        const basic = fields.filter(([f]) => f === "metadata.name" || f === "metadata.namespace");
        const namespace = resource.scope === "Namespaced" ? options.namespace : undefined;
        return [...this.bucket(resource).entries()]
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([, s]) => s)
          .filter((s) => {
            const meta = s.object["metadata"] as {
              name: string;
              namespace?: string;
              labels?: Record<string, string>;
            };
            if (namespace && meta.namespace !== namespace) return false;
            if (!matches(meta.labels ?? {})) return false;
            return basic.every(
              ([f, v]) => (f === "metadata.name" ? meta.name : (meta.namespace ?? "")) === v,
            );
          })
          .map((s) => this.render(s) as T)
          .filter((object) => byIndex.every((has) => has(object)));
      },
    );
  }

  async create<T extends KubeObject>(
    resource: Resource<T>,
    object: T,
    options: WriteOptions = {},
  ): Promise<T> {
    const generated = object.metadata?.generateName;
    const ref =
      object.metadata?.name || !generated
        ? objectRefOf(object)
        : { name: `${generated}*`, namespace: object.metadata?.namespace };
    const context = requestContext("create", resource, ref);
    return await this.call("create", resource, ref, [object, options], context, () => {
      this.known404(resource, context);
      return this.doCreate(resource, object, options, context) as T;
    });
  }

  async update<T extends KubeObject>(
    resource: Resource<T>,
    object: T,
    options: WriteOptions = {},
  ): Promise<T> {
    const ref = objectRefOf(object);
    const context = requestContext("update", resource, ref);
    return await this.call("update", resource, ref, [object, options], context, () => {
      const stored = this.existing(resource, ref, context);
      this.checkVersion(resource, ref, context, stored, object.metadata?.resourceVersion, true);
      return this.commit(resource, context, stored, this.mainWrite(resource, stored, object as Json), {
        verb: "update",
        options,
      }) as T;
    });
  }

  async updateStatus<T extends KubeObject>(
    resource: Resource<T>,
    object: T,
    options: WriteOptions = {},
  ): Promise<T> {
    const ref = objectRefOf(object);
    const context = requestContext("update status", resource, ref);
    return await this.call("updateStatus", resource, ref, [object, options], context, () => {
      if (!this.hasStatus(resource)) throw serverErrors.notFound(context, resource, ref.name);
      const stored = this.existing(resource, ref, context);
      this.checkVersion(resource, ref, context, stored, object.metadata?.resourceVersion, true);
      const next = jsonCopy(stored.object);
      const status = (object as { status?: Json }).status;
      if (status === undefined) delete next["status"];
      else next["status"] = jsonCopy(status);
      return this.commit(resource, context, stored, next, {
        verb: "updateStatus",
        options,
        status: true,
      }) as T;
    });
  }

  async patch<T extends KubeObject>(
    resource: Resource<T>,
    ref: ObjectRef,
    patch: Patch,
    options: WriteOptions = {},
  ): Promise<T> {
    const context = requestContext(`patch (${patch.type})`, resource, ref);
    return await this.call("patch", resource, ref, [patch, options], context, () => {
      objectPath(resource, ref);
      if (patch.type === "strategic" && !BUILTINS.has(resourceKey(resource))) {
        throw apiErrorFor(
          context,
          415,
          "UnsupportedMediaType",
          "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
        );
      }
      const stored = this.existing(resource, ref, context);
      let patched: Json;
      try {
        patched =
          patch.type === "json"
            ? jsonPatch(stored.object, patch.patch)
            : mergePatch(jsonCopy(stored.object), jsonCopy(patch.patch) as Json);
      } catch (error) {
        if (!(error instanceof PatchError)) throw error;
        throw serverErrors.patchFailed(context, resource, ref.name, error.message);
      }
      const quoted = valueAt(patched, ["metadata", "resourceVersion"]);
      this.checkVersion(resource, ref, context, stored, typeof quoted === "string" ? quoted : undefined);
      return this.commit(resource, context, stored, this.mainWrite(resource, stored, patched), {
        verb: "patch",
        options,
      }) as T;
    });
  }

  async apply<T extends KubeObject>(
    resource: Resource<T>,
    object: ApplyConfiguration<T>,
    options: ApplyOptions = {},
  ): Promise<T> {
    const owned = applyConfigurationOwnedBy(resource, object, options.controller);
    return (await this.serverSideApply("apply", resource, owned, options)) as T;
  }

  async applyStatus<T extends KubeObject>(
    resource: Resource<T>,
    object: ApplyConfiguration<T>,
    options: ApplyOptions = {},
  ): Promise<T> {
    return (await this.serverSideApply("applyStatus", resource, object, options)) as T;
  }

  async delete<T extends KubeObject>(
    resource: Resource<T>,
    ref: ObjectRef,
    options: DeleteOptions = {},
  ): Promise<boolean> {
    const context = requestContext("delete", resource, ref);
    return await this.call("delete", resource, ref, [ref, options], context, () => {
      this.known404(resource, context);
      objectPath(resource, ref);
      const key = objectKey(ns(resource, ref.namespace), ref.name);
      const stored = this.bucket(resource).get(key);
      if (!stored) return false;
      const meta = stored.object["metadata"] as {
        uid?: string;
        resourceVersion?: string;
        finalizers?: string[];
        deletionTimestamp?: string;
      };
      const { uid, resourceVersion } = options.preconditions ?? {};
      if (uid !== undefined && uid !== meta.uid) {
        throw serverErrors.preconditionFailed(context, resource, ref.name, "UID", uid, meta.uid ?? "");
      }
      if (resourceVersion !== undefined && resourceVersion !== meta.resourceVersion) {
        throw serverErrors.preconditionFailed(
          context,
          resource,
          ref.name,
          "ResourceVersion",
          resourceVersion,
          meta.resourceVersion ?? "",
        );
      }
      const finalizers = meta.finalizers;
      if (finalizers?.length) {
        if (meta.deletionTimestamp === undefined) {
          const next = jsonCopy(stored.object);
          const m = next["metadata"] as Record<string, Json>;
          if (typeof m["generation"] === "number" && m["generation"] > 0) m["generation"]++;
          m["deletionTimestamp"] = formatKubeTime(this.clock.wallTime());
          m["deletionGracePeriodSeconds"] = 0;
          if (!options.dryRun)
            this.store_(resource, key, { object: next, managed: stored.managed }, "delete");
        }
        return true;
      }
      if (!options.dryRun) {
        this.bucket(resource).delete(key);
        this.revision++;
        this.writes.push({ verb: "delete", kind: resource.kind, resource, object: this.render(stored) });
        this.emit("DELETED", resource, this.render(stored));
      }
      return true;
    });
  }

  // ---- the store ----

  private call<R>(
    verb: FakeVerb,
    resource: Resource,
    ref: { name?: string; namespace?: string | undefined },
    args: readonly unknown[],
    context: ApiErrorContext,
    serve: () => R,
  ): Promise<R> {
    return this.interceptors.run(
      { verb, resource, namespace: ref.namespace, name: ref.name || undefined, args, context },
      () => Promise.resolve().then(serve),
    );
  }

  private serves(resource: Resource): boolean {
    return this.known.has(resourceKey(resource));
  }

  private known404(resource: Resource, context: ApiErrorContext): void {
    if (!this.serves(resource)) throw serverErrors.noSuchResource(context);
  }

  private hasStatus(resource: Resource): boolean {
    const key = resourceKey(resource);
    return BUILTINS.has(key) ? BUILTIN_STATUS.has(key) : !this.withoutStatus.has(key);
  }

  private hasGeneration(resource: Resource): boolean {
    const key = resourceKey(resource);
    return BUILTINS.has(key) ? BUILTIN_GENERATION.has(key) : true;
  }

  private bucket(resource: Resource): Map<string, Stored> {
    const key = resourceKey(resource);
    let bucket = this.store.get(key);
    if (!bucket) this.store.set(key, (bucket = new Map<string, Stored>()));
    return bucket;
  }

  private existing(resource: Resource, ref: ObjectRef, context: ApiErrorContext): Stored {
    this.known404(resource, context);
    objectPath(resource, ref);
    const stored = this.bucket(resource).get(objectKey(ns(resource, ref.namespace), ref.name));
    if (!stored) throw serverErrors.notFound(context, resource, ref.name);
    return stored;
  }

  private checkVersion(
    resource: Resource,
    ref: ObjectRef,
    context: ApiErrorContext,
    stored: Stored,
    quoted: string | undefined,
    update = false,
  ): void {
    if (update && !quoted && !BUILTINS.has(resourceKey(resource))) {
      // Custom resources, unlike most built-in kinds, take no unconditional update.
      const cause = {
        field: "metadata.resourceVersion",
        type: "FieldValueInvalid",
        message: "Invalid value: 0: must be specified for an update",
      };
      throw serverErrors.invalid(context, resource, ref.name, [cause], [cause], describeResource(resource));
    }
    if (quoted && quoted !== (stored.object["metadata"] as Record<string, Json>)["resourceVersion"]) {
      throw serverErrors.conflict(context, resource, ref.name);
    }
  }

  /** `object` as a main write would store it: system metadata kept, and the status too when it is a subresource. */
  private mainWrite(resource: Resource, stored: Stored, object: Json): Record<string, Json> {
    const next = jsonCopy(object) as Record<string, Json>;
    next["apiVersion"] = resource.apiVersion;
    next["kind"] = resource.kind;
    const meta = { ...((next["metadata"] ?? {}) as Record<string, Json>) };
    const old = stored.object["metadata"] as Record<string, Json>;
    for (const key of [
      "name",
      "namespace",
      "uid",
      "creationTimestamp",
      "generation",
      "deletionTimestamp",
      "deletionGracePeriodSeconds",
    ]) {
      if (old[key] === undefined) delete meta[key];
      else meta[key] = old[key];
    }
    delete meta["managedFields"];
    next["metadata"] = meta;
    if (this.hasStatus(resource)) {
      if (stored.object["status"] === undefined) delete next["status"];
      else next["status"] = jsonCopy(stored.object["status"]);
    }
    return next;
  }

  private doCreate(
    resource: Resource,
    object: KubeObject,
    options: WriteOptions,
    context: ApiErrorContext,
    apply = false,
  ): KubeObject {
    const next = jsonCopy(object) as unknown as Record<string, Json>;
    next["apiVersion"] = resource.apiVersion;
    next["kind"] = resource.kind;
    const meta = { ...((next["metadata"] ?? {}) as Record<string, Json>) };
    let name = typeof meta["name"] === "string" ? meta["name"] : "";
    if (!name && typeof meta["generateName"] === "string") {
      name = `${meta["generateName"]}${this.generatedSuffix()}`;
    }
    const invalid = nameProblem(name);
    if (invalid) throw serverErrors.invalid(context, resource, name, [invalid]);
    const namespace = ns(resource, meta["namespace"] as string | undefined);
    const key = objectKey(namespace, name);
    if (this.bucket(resource).has(key)) throw serverErrors.alreadyExists(context, resource, name);
    for (const k of [
      "resourceVersion",
      "deletionTimestamp",
      "deletionGracePeriodSeconds",
      "managedFields",
      "generation",
    ]) {
      delete meta[k];
    }
    meta["name"] = name;
    if (namespace) meta["namespace"] = namespace;
    else delete meta["namespace"];
    meta["uid"] = randomUUID();
    meta["creationTimestamp"] = formatKubeTime(this.clock.wallTime());
    if (this.hasGeneration(resource)) meta["generation"] = 1;
    compactMetadata(meta);
    next["metadata"] = meta;
    if (this.hasStatus(resource)) delete next["status"];
    const manager = options.fieldManager ?? this.fieldManager;
    const entry = this.entry([], resource, manager, apply ? "Apply" : "Update", "");
    const paths = leafPaths(next, this.hasStatus(resource) ? "main" : "all", this.listTypes(resource));
    for (const path of apply ? this.appliedPaths(resource, next, paths) : paths) {
      entry.fields.add(JSON.stringify(path));
    }
    const stored: Stored = { object: next, managed: [entry] };
    if (options.dryRun) {
      const shown = this.render(stored);
      delete shown.metadata!.resourceVersion;
      return shown;
    }
    return this.store_(resource, key, stored, apply ? "apply" : "create");
  }

  /** Stores `next` in place of `stored` after a main or status write, with the server's bookkeeping. */
  private commit(
    resource: Resource,
    context: ApiErrorContext,
    stored: Stored,
    next: Record<string, Json>,
    how: { verb: FakeVerb; options: WriteOptions; status?: boolean; managed?: ManagedEntry[] },
  ): KubeObject {
    const meta = next["metadata"] as Record<string, Json>;
    compactMetadata(meta);
    const oldMeta = stored.object["metadata"] as Record<string, Json>;
    const name = oldMeta["name"] as string;
    if (oldMeta["deletionTimestamp"] !== undefined) {
      const before = new Set((oldMeta["finalizers"] as string[] | undefined) ?? []);
      const added = ((meta["finalizers"] as string[] | undefined) ?? []).filter((f) => !before.has(f));
      if (added.length > 0) {
        const cause = {
          field: "metadata.finalizers",
          type: "FieldValueForbidden",
          message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(", ")}}`,
        };
        // The server's Status repeats this cause (two checks find it).
        throw serverErrors.invalid(context, resource, name, [cause], [cause, cause]);
      }
    }
    if (typeof oldMeta["generation"] === "number" && this.specChanged(resource, stored.object, next)) {
      meta["generation"] = oldMeta["generation"] + 1;
    }
    let managed = how.managed;
    if (!managed) {
      const scope = how.status ? "status" : this.hasStatus(resource) ? "main" : "all";
      const types = this.listTypes(resource);
      const changed = changedPaths(stored.object, next, scope, types).map((p) => JSON.stringify(p));
      managed = stored.managed.map((e) => ({
        ...e,
        fields: new Set([...e.fields].filter((f) => !changed.includes(f))),
      }));
      const entry = this.entry(
        managed,
        resource,
        how.options.fieldManager ?? this.fieldManager,
        "Update",
        how.status ? "status" : "",
      );
      for (const f of changed)
        if (valueAt(next, JSON.parse(f) as string[], types) !== undefined) entry.fields.add(f);
    }
    managed = managed.filter((e) => e.fields.size > 0);
    meta["resourceVersion"] = oldMeta["resourceVersion"] as string;
    const unchanged = jsonEqual(stored.object, next) && sameOwners(stored.managed, managed);
    const candidate: Stored = { object: next, managed };
    if (how.options.dryRun || unchanged) return this.render(unchanged ? stored : candidate);
    const key = objectKey(meta["namespace"] as string | undefined, name);
    if (oldMeta["deletionTimestamp"] !== undefined && !(meta["finalizers"] as string[] | undefined)?.length) {
      // The last finalizer is gone: the server removes the object, and answers
      // with it as written, at the resourceVersion it had.
      this.bucket(resource).delete(key);
      this.revision++;
      const shown = this.render(candidate);
      this.writes.push({ verb: how.verb, kind: resource.kind, resource, object: shown });
      this.emit("DELETED", resource, this.render(candidate));
      return shown;
    }
    return this.store_(resource, key, candidate, how.verb);
  }

  private specChanged(
    resource: Resource,
    before: Record<string, Json>,
    after: Record<string, Json>,
  ): boolean {
    if (BUILTINS.has(resourceKey(resource))) return !jsonEqual(before["spec"], after["spec"]);
    const strip = (o: Record<string, Json>): Record<string, Json> => {
      const { metadata: _m, status, ...rest } = o;
      return this.hasStatus(resource) || status === undefined ? rest : { ...rest, status };
    };
    return !jsonEqual(strip(before), strip(after));
  }

  private async serverSideApply(
    verb: "apply" | "applyStatus",
    resource: Resource,
    object: KubeObject,
    options: ApplyOptions,
  ): Promise<KubeObject> {
    const ref = objectRefOf(object);
    const context = requestContext(verb === "apply" ? "apply" : "apply status", resource, ref);
    return await this.call(verb, resource, ref, [object, options], context, () => {
      this.known404(resource, context);
      objectPath(resource, ref);
      const status = verb === "applyStatus";
      if (status && !this.hasStatus(resource)) throw serverErrors.notFound(context, resource, ref.name);
      const stored = this.bucket(resource).get(objectKey(ns(resource, ref.namespace), ref.name));
      if (!stored) {
        if (status) throw serverErrors.notFound(context, resource, ref.name);
        return this.doCreate(resource, object, options, context, true);
      }
      const config = jsonCopy(object) as unknown as Record<string, Json>;
      const scope = status ? "status" : this.hasStatus(resource) ? "main" : "all";
      const types = this.listTypes(resource);
      const paths = this.appliedPaths(resource, config, leafPaths(config, scope, types));
      const manager = options.fieldManager ?? this.fieldManager;
      const managed = stored.managed.map((e) => ({ ...e, fields: new Set(e.fields) }));
      const self = this.entry(managed, resource, manager, "Apply", status ? "status" : "");
      const conflicts = applyConflicts(managed, self, config, stored.object, paths, types);
      if (conflicts.length > 0 && !options.force) {
        throw serverErrors.applyConflict(
          context,
          resource,
          ref.name,
          conflicts.map((c) => ({ manager: printManager(c.entry), field: printPath(c.key) })),
        );
      }
      // The server finds field conflicts before it compares a quoted resourceVersion.
      const quoted = valueAt(config, ["metadata", "resourceVersion"]);
      this.checkVersion(resource, ref, context, stored, typeof quoted === "string" ? quoted : undefined);
      for (const c of conflicts) c.entry.fields.delete(c.key);
      const declared = new Set(paths.map((p) => JSON.stringify(p)));
      const dropped = [...self.fields].filter((f) => !declared.has(f));
      self.fields = declared;
      // Only the applied part of the object: the rest stays as stored.
      const applied: Record<string, Json> = {};
      for (const [k, v] of Object.entries(config)) {
        if (k === "apiVersion" || k === "kind") continue;
        if (status ? k === "status" : !(k === "status" && this.hasStatus(resource))) applied[k] = v;
      }
      if (applied["metadata"]) {
        const m = { ...(applied["metadata"] as Record<string, Json>) };
        for (const k of [
          "name",
          "namespace",
          "uid",
          "resourceVersion",
          "generation",
          "creationTimestamp",
          "managedFields",
        ])
          delete m[k];
        applied["metadata"] = m;
      }
      const next = applyMerge(jsonCopy(stored.object), applied, types) as Record<string, Json>;
      // Deepest first, so a map given up is removed only once its keys are.
      const depth = (f: string): number => (JSON.parse(f) as string[]).length;
      dropped.sort((a, b) => depth(b) - depth(a));
      for (const f of dropped) {
        if (managed.some((e) => e.fields.has(f))) continue;
        const path = JSON.parse(f) as string[];
        // An entry's key fields name it: they go with the entry, not before it.
        if (isListEntry(path.slice(0, -1)) && isKeyOf(path[path.length - 2]!, path[path.length - 1]!))
          continue;
        const value = valueAt(next, path, types);
        const map = value !== null && typeof value === "object" && !Array.isArray(value);
        // A list-map's entry no manager owns any more goes, with what others' updates left in it.
        const inside = (g: string): boolean => g.startsWith(f.slice(0, -1) + ",");
        if (isListEntry(path) && managed.some((e) => [...e.fields].some(inside))) continue;
        if (!map || Object.keys(value).length === 0 || isListEntry(path)) removeAt(next, path, types);
      }
      return this.commit(resource, context, stored, next, { verb, options, status, managed });
    });
  }

  /**
   * The paths an apply owns: its values and empty maps; the maps that hold
   * values too on a schemaless kind (the server's field sets differ so).
   */
  private appliedPaths(
    resource: Resource,
    config: Record<string, Json>,
    paths: readonly (readonly string[])[],
  ): (readonly string[])[] {
    if (this.schemaless.has(resourceKey(resource))) return [...paths];
    const types = this.listTypes(resource);
    return paths.filter((p) => {
      if (isListEntry(p) || isAtomicMap(types, p)) return true;
      const value = valueAt(config, p, types);
      // An applier owns a list-map's entries and a set's values, not the list.
      if (Array.isArray(value) && isGranular(value, p, types)) return false;
      return (
        value === null || typeof value !== "object" || Array.isArray(value) || Object.keys(value).length === 0
      );
    });
  }

  /** How server-side apply merges the lists of `resource`; undefined when all are atomic. */
  private listTypes(resource: Resource): ListTypes {
    return listTypesOf(this.listTypeTables.get(resourceKey(resource)));
  }

  /** Keeps the list types of every version `crd` serves. */
  private learnCrd(crd: unknown): void {
    const spec = (
      crd as { spec?: { group?: string; names?: { plural?: string }; versions?: { name?: string }[] } }
    ).spec;
    if (!spec?.group || !spec.names?.plural || !spec.versions) {
      throw new TypeError(
        "FakeClient: options.crds takes CustomResourceDefinition objects (apiextensions.k8s.io/v1, with spec.group, spec.names.plural and spec.versions)",
      );
    }
    for (const version of spec.versions) {
      const table = version.name ? crdListTypes(crd, version.name) : undefined;
      if (table) this.listTypeTables.set(`${spec.group}/${version.name}/${spec.names.plural}`, table);
    }
  }

  /** The entry of `manager` for `operation` on `subresource`, added to `managed` when new; its time now. */
  private entry(
    managed: ManagedEntry[],
    resource: Resource,
    manager: string,
    operation: "Apply" | "Update",
    subresource: string,
  ): ManagedEntry {
    const time = formatKubeTime(this.clock.wallTime());
    let entry = managed.find(
      (e) => e.manager === manager && e.operation === operation && e.subresource === subresource,
    );
    if (!entry) {
      entry = {
        manager,
        operation,
        apiVersion: resource.apiVersion,
        time,
        subresource,
        fields: new Set(),
        marksMaps: operation === "Update" || this.schemaless.has(resourceKey(resource)),
      };
      managed.push(entry);
    }
    entry.time = time;
    return entry;
  }

  private store_(resource: Resource, key: string, stored: Stored, verb: FakeVerb): KubeObject {
    (stored.object["metadata"] as Record<string, Json>)["resourceVersion"] = String(++this.revision);
    const bucket = this.bucket(resource);
    const existed = bucket.has(key);
    bucket.set(key, stored);
    const shown = this.render(stored);
    this.writes.push({ verb, kind: resource.kind, resource, object: shown });
    this.emit(existed ? "MODIFIED" : "ADDED", resource, this.render(stored));
    return this.render(stored);
  }

  /** Tells the {@link FakeClient.onChange} listeners; a deletion's object carries the deletion's resourceVersion, as a watch's DELETED event does. */
  private emit(type: FakeChange["type"], resource: Resource, object: KubeObject): void {
    if (this.listeners.size === 0) return;
    if (type === "DELETED") object.metadata = { ...object.metadata, resourceVersion: String(this.revision) };
    for (const listener of [...this.listeners]) listener({ type, resource, object });
  }

  private render(stored: Stored): KubeObject {
    const object = jsonCopy(stored.object) as unknown as KubeObject;
    const managed = renderManagedFields(stored.managed);
    if (managed.length > 0) object.metadata!.managedFields = managed;
    return object;
  }

  private generatedSuffix(): string {
    let n = this.generated++;
    let out = "";
    for (let i = 0; i < 5; i++) {
      out += GENERATE_ALPHABET[n % GENERATE_ALPHABET.length];
      n = Math.floor(n / GENERATE_ALPHABET.length);
    }
    return out;
  }
}

/** Drops empty lists and maps from the metadata, as the server's encoding does (`omitempty`). */
function compactMetadata(meta: Record<string, Json>): void {
  for (const key of ["labels", "annotations", "finalizers", "ownerReferences"]) {
    const value = meta[key];
    if (value === null || (typeof value === "object" && Object.keys(value).length === 0)) delete meta[key];
  }
}

function sameOwners(a: readonly ManagedEntry[], b: readonly ManagedEntry[]): boolean {
  return (
    a.length === b.length &&
    a.every((e, i) => {
      const o = b[i]!;
      return (
        e.manager === o.manager &&
        e.operation === o.operation &&
        e.subresource === o.subresource &&
        e.fields.size === o.fields.size &&
        [...e.fields].every((f) => o.fields.has(f))
      );
    })
  );
}

function ns(resource: Resource, namespace: string | undefined): string | undefined {
  return resource.scope === "Namespaced" ? namespace || undefined : undefined;
}

function nameProblem(name: string): { field: string; type: string; message: string } | undefined {
  if (name === "")
    return {
      field: "metadata.name",
      type: "FieldValueRequired",
      message: "Required value: name or generateName is required",
    };
  if (name.length <= 253 && DNS_SUBDOMAIN.test(name)) return undefined;
  return {
    field: "metadata.name",
    type: "FieldValueInvalid",
    message: `Invalid value: ${JSON.stringify(name)}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
  };
}
