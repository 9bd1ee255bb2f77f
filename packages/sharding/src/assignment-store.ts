import { ApiException, CoreV1Api, type KubeConfig, type V1ConfigMap } from "@kubernetes/client-node";
import { shareConnections } from "./connection-sharing.js";
import type { Assignment } from "./assignment.js";
import { decodeAssignment, encodeAssignment } from "./assignment-codec.js";

/** The label that ties a ring's objects (assignment, member leases) to the ring. */
export const RING_LABEL = "sharding.tessera.dev/ring";

/** The store operations, for errors. */
export type AssignmentStoreVerb = "get" | "create" | "update";

/** A failed read or write of the published assignment; names the verb and resource and keeps the cause. */
export class AssignmentStoreError extends Error {
  override name = "AssignmentStoreError";
  constructor(
    readonly verb: AssignmentStoreVerb,
    readonly resource: string,
    detail: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(`cannot ${verb} ${resource}: ${detail}`, options);
  }
}

/** Someone else changed the assignment since it was read (HTTP 409): re-read and recompute. */
export class AssignmentConflictError extends AssignmentStoreError {
  override name = "AssignmentConflictError";
}

/** An assignment as read, with the version to quote when replacing it. */
export interface VersionedAssignment {
  readonly assignment: Assignment;
  /** The ConfigMap's resourceVersion. */
  readonly version: string;
}

/** Options for {@link ConfigMapAssignmentStore}. */
export interface ConfigMapAssignmentStoreOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  /** The ring's name; the ConfigMap is `<ring>-assignment` unless `name` is given. */
  ring: string;
  name?: string;
}

/**
 * The published assignment of a ring in one ConfigMap, replaced as a whole
 * with a `resourceVersion` precondition: a writer that read an older version
 * gets {@link AssignmentConflictError} and nothing changes, so the assignment
 * always moves from one complete epoch to the next.
 *
 * Needs `get`, `create` and `update` on `configmaps` in the namespace.
 */
export class ConfigMapAssignmentStore {
  readonly namespace: string;
  readonly name: string;
  readonly ring: string;
  private readonly api: CoreV1Api;

  constructor(options: ConfigMapAssignmentStoreOptions) {
    this.namespace = options.namespace;
    this.ring = options.ring;
    this.name = options.name ?? `${options.ring}-assignment`;
    this.api = shareConnections(options.kubeConfig).makeApiClient(CoreV1Api);
  }

  /** `ConfigMap <namespace>/<name>`, for messages. */
  describe(): string {
    return `ConfigMap ${this.namespace}/${this.name}`;
  }

  /** The published assignment; `undefined` when none was published yet. */
  async read(): Promise<VersionedAssignment | undefined> {
    let cm: V1ConfigMap;
    try {
      cm = await this.api.readNamespacedConfigMap({ name: this.name, namespace: this.namespace });
    } catch (err) {
      if (err instanceof ApiException && err.code === 404) return undefined;
      throw this.failure("get", err);
    }
    return { assignment: decodeAssignment(cm.data, this.describe()), version: cm.metadata!.resourceVersion! };
  }

  /** Publishes the first assignment; conflict when one exists already. */
  async create(assignment: Assignment): Promise<string> {
    try {
      const cm = await this.api.createNamespacedConfigMap({
        namespace: this.namespace,
        body: this.body(assignment),
      });
      return cm.metadata!.resourceVersion!;
    } catch (err) {
      throw this.failure("create", err);
    }
  }

  /** Replaces the assignment read at `version`; conflict when it changed since. */
  async replace(assignment: Assignment, version: string): Promise<string> {
    const body = this.body(assignment);
    body.metadata!.resourceVersion = version;
    try {
      const cm = await this.api.replaceNamespacedConfigMap({
        name: this.name,
        namespace: this.namespace,
        body,
      });
      return cm.metadata!.resourceVersion!;
    } catch (err) {
      throw this.failure("update", err);
    }
  }

  private body(assignment: Assignment): V1ConfigMap {
    return {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: this.name, namespace: this.namespace, labels: { [RING_LABEL]: this.ring } },
      data: encodeAssignment(assignment),
    };
  }

  private failure(verb: AssignmentStoreVerb, err: unknown): AssignmentStoreError {
    if (err instanceof ApiException) {
      const message = apiMessage(err.body) ?? err.message.split("\n")[0];
      const Ctor = err.code === 409 ? AssignmentConflictError : AssignmentStoreError;
      return new Ctor(verb, this.describe(), `HTTP ${err.code}: ${message}`, err.code, { cause: err });
    }
    const detail = err instanceof Error ? err.message : String(err);
    return new AssignmentStoreError(verb, this.describe(), detail, undefined, { cause: err });
  }
}

function apiMessage(body: unknown): string | undefined {
  try {
    const parsed: unknown = typeof body === "string" ? JSON.parse(body) : body;
    const message = (parsed as { message?: unknown } | undefined)?.message;
    return typeof message === "string" ? message : undefined;
  } catch {
    return typeof body === "string" ? body : undefined;
  }
}
