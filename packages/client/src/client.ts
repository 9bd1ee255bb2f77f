import type { KubeObject } from "./kube-object.js";
import type { Resource } from "./resource.js";

/** Names one object: its name, and its namespace when the kind is namespaced. */
export interface ObjectRef {
  readonly name: string;
  /** Required for a namespaced kind, absent (or "") for a cluster-scoped one. */
  readonly namespace?: string;
}

/** Options of a `get`. */
export interface ReadOptions {
  signal?: AbortSignal;
}

/** Which objects a `list` returns. */
export interface ListOptions {
  /** Absent: every namespace (or a cluster-scoped kind). */
  namespace?: string;
  /**
   * Labels that must match: an object of exact values (`{ app: "web" }`), or a
   * selector in the API server's grammar (`"app=web,tier!=db"`, `"env in (a,b)"`,
   * `"!legacy"`, `"replicas>2"`). The cache and the API server accept, refuse and
   * match alike; a selector the server would refuse throws `LabelSelectorError`
   * before any request.
   */
  labels?: Readonly<Record<string, string>> | string;
  /**
   * Field paths and the exact values they must have, e.g. `{ "metadata.name": "a", "spec.nodeName": "n1" }`.
   * The direct client sends them to the server as a field selector; the
   * manager's cached client reads each from the index of that name declared
   * on the kind (`metadata.name` and `metadata.namespace` need none), and
   * refuses a field without one.
   */
  fields?: Readonly<Record<string, string>>;
  /**
   * The objects a declared index files under `value` (controller-runtime's
   * field indexers): cached reads only; the direct client refuses it.
   */
  index?: { readonly name: string; readonly value: string };
  signal?: AbortSignal;
}

/** Options every write takes. */
export interface WriteOptions {
  signal?: AbortSignal;
  /** Validate and admit without persisting (`dryRun=All`). */
  dryRun?: boolean;
  /** Default: the manager's field manager. */
  fieldManager?: string;
}

/** A patch body and how the server should read it. */
export type Patch =
  /** RFC 7386 JSON merge patch: `null` deletes a field, arrays are replaced whole. */
  | { readonly type: "merge"; readonly patch: Readonly<Record<string, unknown>> }
  /** RFC 6902 JSON patch: operations, which may test preconditions. */
  | { readonly type: "json"; readonly patch: readonly JsonPatchOperation[] }
  /** Kubernetes strategic merge patch (built-in kinds only). */
  | { readonly type: "strategic"; readonly patch: Readonly<Record<string, unknown>> };

/** One RFC 6902 operation. */
export type JsonPatchOperation =
  | { readonly op: "add" | "replace" | "test"; readonly path: string; readonly value: unknown }
  | { readonly op: "remove"; readonly path: string }
  | { readonly op: "move" | "copy"; readonly from: string; readonly path: string };

/** Options of a server-side apply. */
export interface ApplyOptions extends WriteOptions {
  /** Take over fields another manager owns instead of failing with a conflict. Default false. */
  force?: boolean;
  /**
   * The object that controls the applied one: its controller reference
   * (`controller: true`, `blockOwnerDeletion: true`) is set on the applied
   * object, so deleting the owner garbage-collects it and the owner's
   * controller hears of its changes (see `setControllerReference`). Fails
   * with an `OwnerReferenceError` when another owner already controls the
   * object, or across namespaces. Ignored by `applyStatus`.
   */
  controller?: KubeObject;
}

/** Options of a delete. */
export interface DeleteOptions extends WriteOptions {
  /** Default: the kind's own (Background for most). */
  propagationPolicy?: "Foreground" | "Background" | "Orphan";
  /** Delete only if the object still has this uid / resourceVersion. */
  preconditions?: { uid?: string; resourceVersion?: string };
  gracePeriodSeconds?: number;
}

/**
 * The object shape a server-side apply takes: `apiVersion`, `kind` and
 * `metadata.name` are filled from the handle and the ref where missing;
 * everything else is the fields this manager declares it owns.
 */
export type ApplyConfiguration<T extends KubeObject> = Partial<T> & {
  metadata: NonNullable<T["metadata"]> & { name: string; namespace?: string };
};

/** The reads every client has; where they come from is its `reads`. */
export interface Reader {
  /** The object, or `undefined` when there is none. */
  get<T extends KubeObject>(
    resource: Resource<T>,
    ref: ObjectRef,
    options?: ReadOptions,
  ): Promise<T | undefined>;
  /** The objects that match (every page of them). */
  list<T extends KubeObject>(resource: Resource<T>, options?: ListOptions): Promise<T[]>;
}

/**
 * Reads and writes objects of any kind named by a `Resource<T>` handle.
 *
 * The manager's client is controller-runtime's split client: `get` and `list`
 * read the informer cache (starting an informer for the kind on first use and
 * waiting for it to sync), writes go to the API server. The uncached client
 * (`Tokens.ApiClient`) reads from the API server too.
 *
 * Every failure is an `ApiError` subclass (`NotFoundError`, `ConflictError`,
 * `InvalidError`, `ForbiddenError`, ...) naming the verb, kind, namespace and name.
 */
export interface Client extends Reader {
  /**
   * Where reads come from: `"cache"` for the manager's split client,
   * `"api"` for a client that reads from the API server. An {@link ApiReader}
   * requires `"api"`, so the cached client cannot be passed where a fresh
   * read is needed.
   */
  readonly reads: "cache" | "api";
  /** Creates `object` (its `apiVersion` and `kind` filled from the handle); resolves with what the server stored. */
  create<T extends KubeObject>(resource: Resource<T>, object: T, options?: WriteOptions): Promise<T>;
  /** Replaces the object; `metadata.resourceVersion` makes it conditional (a `ConflictError` when stale). */
  update<T extends KubeObject>(resource: Resource<T>, object: T, options?: WriteOptions): Promise<T>;
  patch<T extends KubeObject>(
    resource: Resource<T>,
    ref: ObjectRef,
    patch: Patch,
    options?: WriteOptions,
  ): Promise<T>;
  /** Server-side apply with the manager's field manager; resolves with the object as applied. */
  apply<T extends KubeObject>(
    resource: Resource<T>,
    object: ApplyConfiguration<T>,
    options?: ApplyOptions,
  ): Promise<T>;
  /** Deletes; resolves `false` when the object was already gone. */
  delete<T extends KubeObject>(
    resource: Resource<T>,
    ref: ObjectRef,
    options?: DeleteOptions,
  ): Promise<boolean>;
  /** Replaces the status subresource from `object.status` (conditional on `metadata.resourceVersion` when set). */
  updateStatus<T extends KubeObject>(resource: Resource<T>, object: T, options?: WriteOptions): Promise<T>;
  /** Server-side apply on the status subresource. */
  applyStatus<T extends KubeObject>(
    resource: Resource<T>,
    object: ApplyConfiguration<T>,
    options?: ApplyOptions,
  ): Promise<T>;
}

/**
 * Reads that go to the API server, never to a cache (controller-runtime's
 * API reader): for a read that must not be stale, such as the object a
 * finalizer or a conflict retry is about to write, or a kind the manager
 * should not cache. Its `reads` is `"api"`, so the manager's cached
 * {@link Client} is not one; `Tokens.ApiReader` is bound to an `ApiClient`.
 */
export interface ApiReader extends Reader {
  readonly reads: "api";
}
