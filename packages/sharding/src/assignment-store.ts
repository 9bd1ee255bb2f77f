import type { V1ConfigMap } from "@kubernetes/client-node";
import type { Instrumentation } from "@tessera/core";
import {
  collectionPath,
  ConfigMaps,
  describeResource,
  isNotFound,
  KubeTransport,
  type ApiErrorContext,
  type KubeConfigLike,
  type TransportRequest,
} from "@tessera/client";
import type { Assignment } from "./assignment.js";
import { decodeAssignment, encodeAssignment } from "./assignment-codec.js";
import { WatchedObjects } from "./watched-objects.js";

/** The label that ties a ring's objects (assignment, member leases) to the ring. */
export const RING_LABEL = "sharding.tessera.dev/ring";

/** An assignment as read, with the version to quote when replacing it. */
export interface VersionedAssignment {
  readonly assignment: Assignment;
  /** The ConfigMap's resourceVersion. */
  readonly version: string;
}

/** Options for {@link ConfigMapAssignmentStore}. */
export interface ConfigMapAssignmentStoreOptions extends Instrumentation {
  kubeConfig: KubeConfigLike;
  namespace: string;
  /** The ring's name; the ConfigMap is `<ring>-assignment` unless `name` is given. */
  ring: string;
  name?: string;
  /**
   * The transport to send through; default one of its own over `kubeConfig`
   * with a pool of two kept-alive connections, recording its request metrics
   * (`rest_client_*`) to `meter`.
   */
  transport?: KubeTransport;
}

/**
 * The published assignment of a ring in one ConfigMap, replaced as a whole
 * with a `resourceVersion` precondition: a writer that read an older version
 * gets a `ConflictError` (409) and nothing changes, so the assignment always
 * moves from one complete epoch to the next. Every failure is an `ApiError`
 * of `@tessera/client` naming the verb and the ConfigMap (a
 * `TransportError`, code 0, when no answer came).
 *
 * Needs `get`, `create` and `update` on `configmaps` in the namespace.
 */
export class ConfigMapAssignmentStore {
  readonly namespace: string;
  readonly name: string;
  readonly ring: string;
  private readonly kubeConfig: KubeConfigLike;
  private readonly transport: KubeTransport;
  private readonly instrumentation: Instrumentation;
  private watched: WatchedObjects<V1ConfigMap> | undefined;
  /** The last ConfigMap decoded from the watched copy, so an unchanged one is not decoded again. */
  private decoded: { version: string; read: VersionedAssignment } | undefined;

  constructor(options: ConfigMapAssignmentStoreOptions) {
    this.instrumentation = {
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.random ? { random: options.random } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.meter ? { meter: options.meter } : {}),
    };
    this.namespace = options.namespace;
    this.ring = options.ring;
    this.name = options.name ?? `${options.ring}-assignment`;
    this.kubeConfig = options.kubeConfig;
    this.transport =
      options.transport ??
      new KubeTransport(options.kubeConfig, {
        maxSockets: 2,
        ...(options.meter ? { meter: options.meter } : {}),
      });
  }

  /** `ConfigMap <namespace>/<name>`, for messages. */
  describe(): string {
    return `ConfigMap ${this.namespace}/${this.name}`;
  }

  /**
   * Keeps a watched copy of the assignment until `signal` aborts. Meanwhile,
   * once the watch has synced, {@link read} answers from the copy without a
   * request: a member reads the assignment every poll interval, and between
   * epochs the server then sends nothing. Needs `list` and `watch` on
   * `configmaps` in the namespace besides `get`.
   */
  async run(signal: AbortSignal): Promise<void> {
    const watched = new WatchedObjects(ConfigMaps, {
      ...this.instrumentation,
      kubeConfig: this.kubeConfig,
      namespace: this.namespace,
      fieldSelector: `metadata.name=${this.name}`,
      name: `ring ${this.ring} assignment`,
    });
    this.watched = watched;
    try {
      await watched.run(signal);
    } finally {
      if (this.watched === watched) this.watched = undefined;
    }
  }

  /**
   * The published assignment; `undefined` when none was published yet. From
   * the watched copy while {@link run} runs and has synced, else by a GET.
   *
   * @throws AssignmentFormatError when the ConfigMap holds no valid assignment (a hand edit)
   */
  async read(): Promise<VersionedAssignment | undefined> {
    const watched = this.watched;
    const cm = watched?.hasSynced()
      ? watched.list()[0]
      : await this.call("get", { method: "GET", path: this.objectPath() }, true);
    if (cm === undefined) return undefined;
    const version = cm.metadata!.resourceVersion!;
    if (this.decoded?.version === version) return this.decoded.read;
    const read = { assignment: decodeAssignment(cm.data, this.describe()), version };
    this.decoded = { version, read };
    return read;
  }

  /** Publishes the first assignment; an `AlreadyExistsError` (409) when one exists already. */
  async create(assignment: Assignment): Promise<string> {
    const cm = await this.call("create", {
      method: "POST",
      path: this.collectionPath(),
      body: this.body(assignment),
    });
    return cm.metadata!.resourceVersion!;
  }

  /** Replaces the assignment read at `version`; a `ConflictError` (409) when it changed since. */
  async replace(assignment: Assignment, version: string): Promise<string> {
    const body = this.body(assignment);
    body.metadata!.resourceVersion = version;
    const cm = await this.call("update", { method: "PUT", path: this.objectPath(), body });
    return cm.metadata!.resourceVersion!;
  }

  private body(assignment: Assignment): V1ConfigMap {
    return {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: this.name, namespace: this.namespace, labels: { [RING_LABEL]: this.ring } },
      data: encodeAssignment(assignment),
    };
  }

  private collectionPath(): string {
    return collectionPath(ConfigMaps, this.namespace);
  }

  private objectPath(): string {
    return `${this.collectionPath()}/${encodeURIComponent(this.name)}`;
  }

  private async call(
    verb: string,
    request: TransportRequest,
    absentOk: true,
  ): Promise<V1ConfigMap | undefined>;
  private async call(verb: string, request: TransportRequest): Promise<V1ConfigMap>;
  private async call(
    verb: string,
    request: TransportRequest,
    absentOk = false,
  ): Promise<V1ConfigMap | undefined> {
    const context: ApiErrorContext = {
      verb,
      resource: describeResource(ConfigMaps),
      namespace: this.namespace,
      name: this.name,
    };
    try {
      return await this.transport.call<V1ConfigMap>(context, request);
    } catch (err) {
      if (absentOk && isNotFound(err)) return undefined;
      throw err;
    }
  }
}
