import type { V1Lease, V1LeaseSpec } from "@kubernetes/client-node";
import type { Meter } from "@opentelemetry/api";
import {
  ApiError,
  collectionPath,
  describeResource,
  formatMicroTime,
  isNotFound,
  KubeTransport,
  Leases,
  parseKubeTime,
  TransportError,
  type ApiErrorContext,
  type KubeConfigLike,
  type TransportRequest,
} from "@tessera/client";
import type { LeaderElectionRecord, VersionedRecord } from "./leader-election-record.js";
import type { LockVerb, ResourceLock } from "./resource-lock.js";

/** Options for {@link LeaseLock}. */
export interface LeaseLockOptions {
  /** Credentials and server (a client-node KubeConfig, or any {@link KubeConfigLike}). */
  kubeConfig: KubeConfigLike;
  /** Namespace of the Lease. */
  namespace: string;
  /** Name of the Lease. */
  name: string;
  /** The identity written as holder; unique per replica (for example the pod name). */
  identity: string;
  /** Labels put on the Lease when this lock creates it. */
  labels?: Record<string, string>;
  /**
   * The transport to send through; default one of its own over `kubeConfig`
   * with a pool of two kept-alive connections, so that a renewal neither
   * queues behind other traffic nor pays a TLS handshake against the renew
   * deadline.
   */
  transport?: KubeTransport;
  /** Where the default transport records its request metrics (`rest_client_*`); default the global meter. */
  meter?: Meter;
}

/**
 * A {@link ResourceLock} on a `coordination.k8s.io/v1` Lease. Updates replace
 * the whole Lease quoting the `metadata.resourceVersion` last read, so the
 * apiserver refuses (409) a write based on a stale read; that surfaces as
 * a `ConflictError` (an `AlreadyExistsError` for a create that found the
 * Lease). Every failure is an `ApiError` of `@tessera/client` naming the
 * verb and the Lease; a request that got no answer, or was aborted, is a
 * `TransportError` (code 0). Labels, annotations and spec fields that
 * leader election does not own are carried over from the last read.
 *
 * The identity needs `get`, `create` and `update` on `leases` in the
 * namespace.
 */
export class LeaseLock implements ResourceLock {
  readonly identity: string;
  readonly namespace: string;
  readonly name: string;
  private readonly transport: KubeTransport;
  private readonly path: string;
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
    // A pool of its own: a new TLS handshake per renewal would eat the renew deadline.
    this.transport =
      options.transport ??
      new KubeTransport(options.kubeConfig, {
        maxSockets: 2,
        ...(options.meter ? { meter: options.meter } : {}),
      });
    this.path = collectionPath(Leases, this.namespace);
  }

  describe(): string {
    return `Lease ${this.namespace}/${this.name}`;
  }

  async get(signal?: AbortSignal): Promise<VersionedRecord | undefined> {
    const lease = await this.call("get", { method: "GET", path: this.objectPath(), signal }, true);
    if (lease === undefined) return undefined;
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
    const lease = await this.call("create", { method: "POST", path: this.path, body, signal });
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
    const lease = await this.call("update", { method: "PUT", path: this.objectPath(), body, signal });
    this.last = lease;
    return versionOf(lease);
  }

  private objectPath(): string {
    return `${this.path}/${encodeURIComponent(this.name)}`;
  }

  /** One request; a 404 is `undefined` when `absentOk`, every other failure an {@link ApiError}. */
  private async call(verb: LockVerb, request: TransportRequest, absentOk: true): Promise<V1Lease | undefined>;
  private async call(verb: LockVerb, request: TransportRequest): Promise<V1Lease>;
  private async call(
    verb: LockVerb,
    request: TransportRequest,
    absentOk = false,
  ): Promise<V1Lease | undefined> {
    const context: ApiErrorContext = {
      verb,
      resource: describeResource(Leases),
      namespace: this.namespace,
      name: this.name,
    };
    try {
      return await this.transport.call<V1Lease>(context, request);
    } catch (err) {
      if (absentOk && isNotFound(err)) return undefined;
      if (err instanceof ApiError) throw err;
      // Aborted (the elector's request timeout, or its stop): no answer, as with a lost connection.
      const aborted = request.signal?.aborted === true;
      const reason: unknown = aborted ? request.signal?.reason : err;
      const detail = reason instanceof Error ? reason.message : "request aborted";
      throw new TransportError(context, 0, aborted ? "Aborted" : "ConnectionFailed", detail, undefined, {
        cause: err,
      });
    }
  }
}

function versionOf(lease: V1Lease): string {
  const version = lease.metadata?.resourceVersion;
  if (!version)
    throw new Error(`Lease ${lease.metadata?.namespace}/${lease.metadata?.name} has no resourceVersion`);
  return version;
}

function recordOf(lease: V1Lease): LeaderElectionRecord {
  const spec = lease.spec ?? {};
  return {
    holderIdentity: spec.holderIdentity ?? "",
    leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
    acquireTime: parseKubeTime(spec.acquireTime),
    renewTime: parseKubeTime(spec.renewTime),
    leaseTransitions: spec.leaseTransitions ?? 0,
  };
}

/** The server wants MicroTime strings; client-node's Lease type says Date, which JSON would write with milliseconds. */
function microTime(date: Date | undefined): Date | undefined {
  return date ? (formatMicroTime(date) as unknown as Date) : undefined;
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
