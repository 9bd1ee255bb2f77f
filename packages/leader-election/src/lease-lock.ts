import {
  ApiException,
  CoordinationV1Api,
  Observable,
  V1MicroTime,
  type ConfigurationOptions,
  type KubeConfig,
  type ObservableMiddleware,
  type V1Lease,
  type V1LeaseSpec,
} from "@kubernetes/client-node";
import type { LeaderElectionRecord, VersionedRecord } from "./leader-election-record.js";
import { LockConflictError, LockError, type LockVerb } from "./lock-error.js";
import type { ResourceLock } from "./resource-lock.js";

/** Options for {@link LeaseLock}. */
export interface LeaseLockOptions {
  /** Credentials and server. */
  kubeConfig: KubeConfig;
  /** Namespace of the Lease. */
  namespace: string;
  /** Name of the Lease. */
  name: string;
  /** The identity written as holder; unique per replica (for example the pod name). */
  identity: string;
  /** Labels put on the Lease when this lock creates it. */
  labels?: Record<string, string>;
}

/**
 * A {@link ResourceLock} on a `coordination.k8s.io/v1` Lease. Updates replace
 * the whole Lease quoting the `metadata.resourceVersion` last read, so the
 * apiserver refuses (409) a write based on a stale read; that surfaces as
 * {@link LockConflictError}. Labels, annotations and spec fields that leader
 * election does not own are carried over from the last read.
 *
 * The identity needs `get`, `create` and `update` on `leases` in the
 * namespace.
 */
export class LeaseLock implements ResourceLock {
  readonly identity: string;
  readonly namespace: string;
  readonly name: string;
  private readonly api: CoordinationV1Api;
  private readonly labels: Record<string, string> | undefined;
  private last: V1Lease | undefined;

  constructor(options: LeaseLockOptions) {
    if (!options.identity) throw new Error("LeaseLock: identity must not be empty");
    if (!options.name) throw new Error("LeaseLock: name must not be empty");
    if (!options.namespace) throw new Error("LeaseLock: namespace must not be empty");
    this.identity = options.identity;
    this.namespace = options.namespace;
    this.name = options.name;
    this.labels = options.labels;
    this.api = options.kubeConfig.makeApiClient(CoordinationV1Api);
  }

  describe(): string {
    return `Lease ${this.namespace}/${this.name}`;
  }

  async get(signal?: AbortSignal): Promise<VersionedRecord | undefined> {
    let lease: V1Lease;
    try {
      lease = await this.api.readNamespacedLease(
        { name: this.name, namespace: this.namespace },
        requestOptions(signal),
      );
    } catch (err) {
      if (err instanceof ApiException && err.code === 404) return undefined;
      throw this.failure("get", err, signal);
    }
    this.last = lease;
    return { record: recordOf(lease), version: versionOf(lease) };
  }

  async create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<string> {
    const body: V1Lease = {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: this.name, namespace: this.namespace, labels: this.labels },
      spec: specOf(record, undefined),
    };
    let lease: V1Lease;
    try {
      lease = await this.api.createNamespacedLease(
        { namespace: this.namespace, body },
        requestOptions(signal),
      );
    } catch (err) {
      throw this.failure("create", err, signal);
    }
    this.last = lease;
    return versionOf(lease);
  }

  async update(record: LeaderElectionRecord, version: string, signal?: AbortSignal): Promise<string> {
    const base = this.last?.metadata?.resourceVersion === version ? this.last : undefined;
    const body: V1Lease = {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: {
        ...(base?.metadata ?? { labels: this.labels }),
        name: this.name,
        namespace: this.namespace,
        resourceVersion: version,
      },
      spec: specOf(record, base?.spec),
    };
    let lease: V1Lease;
    try {
      lease = await this.api.replaceNamespacedLease(
        { name: this.name, namespace: this.namespace, body },
        requestOptions(signal),
      );
    } catch (err) {
      throw this.failure("update", err, signal);
    }
    this.last = lease;
    return versionOf(lease);
  }

  private failure(verb: LockVerb, err: unknown, signal: AbortSignal | undefined): LockError {
    const resource = this.describe();
    if (err instanceof ApiException) {
      const status = err.code;
      const detail = `HTTP ${status}: ${serverMessage(err.body) ?? err.message.split("\n")[0]}`;
      if (status === 409) return new LockConflictError(verb, resource, detail, { status, cause: err });
      return new LockError(verb, resource, detail, { status, cause: err });
    }
    if (signal?.aborted) {
      const reason: unknown = signal.reason;
      const detail = reason instanceof Error ? reason.message : "request aborted";
      return new LockError(verb, resource, detail, { cause: err });
    }
    return new LockError(verb, resource, describeTransportError(err), { cause: err });
  }
}

function requestOptions(
  signal: AbortSignal | undefined,
): ConfigurationOptions<ObservableMiddleware> | undefined {
  if (!signal) return undefined;
  const middleware: ObservableMiddleware = {
    pre: (context) => {
      context.setSignal(signal);
      return new Observable(Promise.resolve(context));
    },
    post: (context) => new Observable(Promise.resolve(context)),
  };
  return { middleware: [middleware], middlewareMergeStrategy: "append" };
}

function versionOf(lease: V1Lease): string {
  const version = lease.metadata?.resourceVersion;
  if (!version)
    throw new Error(`Lease ${lease.metadata?.namespace}/${lease.metadata?.name} has no resourceVersion`);
  return version;
}

/** client-node leaves MicroTime fields as the RFC 3339 strings the server sent. */
function timeOf(value: Date | string | undefined): Date | undefined {
  if (value === undefined || value === null) return undefined;
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function recordOf(lease: V1Lease): LeaderElectionRecord {
  const spec = lease.spec ?? {};
  return {
    holderIdentity: spec.holderIdentity ?? "",
    leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
    acquireTime: timeOf(spec.acquireTime),
    renewTime: timeOf(spec.renewTime),
    leaseTransitions: spec.leaseTransitions ?? 0,
  };
}

function microTime(date: Date | undefined): V1MicroTime | undefined {
  return date ? new V1MicroTime(date.getTime()) : undefined;
}

function specOf(record: LeaderElectionRecord, base: V1LeaseSpec | undefined): V1LeaseSpec {
  return {
    ...base,
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    acquireTime: microTime(record.acquireTime),
    renewTime: microTime(record.renewTime),
    leaseTransitions: record.leaseTransitions,
  };
}

function serverMessage(body: unknown): string | undefined {
  let parsed: unknown = body;
  if (typeof body === "string") {
    try {
      parsed = JSON.parse(body);
    } catch {
      return body.trim() || undefined;
    }
  }
  if (parsed && typeof parsed === "object" && "message" in parsed) {
    const message = parsed.message;
    if (typeof message === "string" && message) return message;
  }
  return undefined;
}

function describeTransportError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : "";
  return `${err.message}${cause}`;
}
