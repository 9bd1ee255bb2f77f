import type { KubeConfigLike } from "./kube-config-like.js";
import { collectionPath, describeResource, type Resource } from "./resource.js";
import { type KubeObject, type ObjectList } from "./kube-object.js";
import { isNotFound } from "./api-error.js";
import type {
  ApiReader,
  ApplyConfiguration,
  ApplyOptions,
  Client,
  DeleteOptions,
  ListOptions,
  ObjectRef,
  Patch,
  WriteOptions,
} from "./client.js";
import { KubeTransport } from "./kube-transport.js";
import { labelSelectorString } from "./label-selector.js";
import { applyConfigurationOwnedBy } from "./owner-references.js";
import { objectPath, objectRefOf, requestContext } from "./object-ref.js";

/** Options of an {@link ApiClient}. */
export interface ApiClientOptions {
  /** The field manager of writes and server-side apply unless a call names one, e.g. the operator's name. */
  fieldManager: string;
  /** The transport to share (its connection pool); default a new one over `kubeConfig`. */
  transport?: KubeTransport;
  /** Page size of `list`; default 500, client-go's. */
  pageSize?: number;
}

const PATCH_TYPES: Readonly<Record<Patch["type"], string>> = {
  merge: "application/merge-patch+json",
  json: "application/json-patch+json",
  strategic: "application/strategic-merge-patch+json",
};
// Server-side apply takes YAML, of which JSON is a subset: no YAML library needed.
const APPLY_PATCH = "application/apply-patch+yaml";

/**
 * The {@link Client} that talks to the API server for every call, reads
 * included (controller-runtime's API reader): for a read that must not be
 * stale, or for kinds the manager should not cache. Writes use the field
 * manager of the options; `apply` is server-side apply.
 */
export class ApiClient implements Client, ApiReader {
  readonly reads = "api";
  private readonly transport: KubeTransport;
  private readonly fieldManager: string;
  private readonly pageSize: number;

  constructor(kubeConfig: KubeConfigLike, options: ApiClientOptions) {
    this.transport = options.transport ?? new KubeTransport(kubeConfig);
    this.fieldManager = options.fieldManager;
    this.pageSize = options.pageSize ?? 500;
  }

  async get<T extends KubeObject>(
    resource: Resource<T>,
    ref: ObjectRef,
    options: { signal?: AbortSignal } = {},
  ): Promise<T | undefined> {
    try {
      const object = await this.transport.call<T>(requestContext("get", resource, ref), {
        method: "GET",
        path: objectPath(resource, ref),
        signal: options.signal,
      });
      return withType(resource, object);
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async list<T extends KubeObject>(resource: Resource<T>, options: ListOptions = {}): Promise<T[]> {
    if (options.index !== undefined) {
      throw new TypeError(
        `list ${describeResource(resource)}: index "${options.index.name}" is kept by the manager's cache, not the API server; list through the cached client (Tokens.Client), or select by fields here`,
      );
    }
    const items: T[] = [];
    let token: string | undefined;
    do {
      const query = new URLSearchParams({ limit: String(this.pageSize) });
      if (options.labels !== undefined) query.set("labelSelector", labelSelectorString(options.labels));
      if (options.fields !== undefined) {
        query.set(
          "fieldSelector",
          Object.entries(options.fields)
            .map(([k, v]) => `${k}=${v}`)
            .join(","),
        );
      }
      if (token) query.set("continue", token);
      const page = await this.transport.call<ObjectList<T>>(
        { verb: "list", resource: describeResource(resource), namespace: options.namespace },
        { method: "GET", path: collectionPath(resource, options.namespace), query, signal: options.signal },
      );
      for (const item of page.items ?? []) items.push(withType(resource, item));
      token = page.metadata?.continue || undefined;
    } while (token);
    return items;
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
    return withType(
      resource,
      await this.transport.call<T>(requestContext("create", resource, ref), {
        method: "POST",
        path: collectionPath(resource, ref.namespace),
        query: this.writeQuery(options),
        body: withType(resource, object),
        signal: options.signal,
      }),
    );
  }

  update<T extends KubeObject>(resource: Resource<T>, object: T, options: WriteOptions = {}): Promise<T> {
    return this.put("update", resource, object, "", options);
  }

  updateStatus<T extends KubeObject>(
    resource: Resource<T>,
    object: T,
    options: WriteOptions = {},
  ): Promise<T> {
    return this.put("update status", resource, object, "/status", options);
  }

  async patch<T extends KubeObject>(
    resource: Resource<T>,
    ref: ObjectRef,
    patch: Patch,
    options: WriteOptions = {},
  ): Promise<T> {
    return withType(
      resource,
      await this.transport.call<T>(requestContext(`patch (${patch.type})`, resource, ref), {
        method: "PATCH",
        path: objectPath(resource, ref),
        query: this.writeQuery(options),
        body: patch.patch,
        contentType: PATCH_TYPES[patch.type],
        signal: options.signal,
      }),
    );
  }

  async apply<T extends KubeObject>(
    resource: Resource<T>,
    object: ApplyConfiguration<T>,
    options: ApplyOptions = {},
  ): Promise<T> {
    const owned = applyConfigurationOwnedBy(resource, object, options.controller);
    return this.serverSideApply("apply", resource, owned, "", options);
  }

  applyStatus<T extends KubeObject>(
    resource: Resource<T>,
    object: ApplyConfiguration<T>,
    options: ApplyOptions = {},
  ): Promise<T> {
    return this.serverSideApply("apply status", resource, object, "/status", options);
  }

  async delete<T extends KubeObject>(
    resource: Resource<T>,
    ref: ObjectRef,
    options: DeleteOptions = {},
  ): Promise<boolean> {
    const body: Record<string, unknown> = { apiVersion: "v1", kind: "DeleteOptions" };
    if (options.propagationPolicy) body["propagationPolicy"] = options.propagationPolicy;
    if (options.preconditions) body["preconditions"] = options.preconditions;
    if (options.gracePeriodSeconds !== undefined) body["gracePeriodSeconds"] = options.gracePeriodSeconds;
    if (options.dryRun) body["dryRun"] = ["All"];
    try {
      await this.transport.call(requestContext("delete", resource, ref), {
        method: "DELETE",
        path: objectPath(resource, ref),
        body,
        signal: options.signal,
      });
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  private async put<T extends KubeObject>(
    verb: string,
    resource: Resource<T>,
    object: T,
    subresource: string,
    options: WriteOptions,
  ): Promise<T> {
    const ref = objectRefOf(object);
    return withType(
      resource,
      await this.transport.call<T>(requestContext(verb, resource, ref), {
        method: "PUT",
        path: objectPath(resource, ref) + subresource,
        query: this.writeQuery(options),
        body: withType(resource, object),
        signal: options.signal,
      }),
    );
  }

  private async serverSideApply<T extends KubeObject>(
    verb: string,
    resource: Resource<T>,
    object: ApplyConfiguration<T>,
    subresource: string,
    options: ApplyOptions,
  ): Promise<T> {
    const ref = objectRefOf(object);
    const query = this.writeQuery(options);
    if (options.force) query.set("force", "true");
    return withType(
      resource,
      await this.transport.call<T>(requestContext(verb, resource, ref), {
        method: "PATCH",
        path: objectPath(resource, ref) + subresource,
        query,
        body: withType(resource, object as T),
        contentType: APPLY_PATCH,
        signal: options.signal,
      }),
    );
  }

  private writeQuery(options: WriteOptions): URLSearchParams {
    const query = new URLSearchParams({ fieldManager: options.fieldManager ?? this.fieldManager });
    if (options.dryRun) query.set("dryRun", "All");
    return query;
  }
}

/** Lists omit each item's apiVersion and kind; the handle knows them. */
function withType<T extends KubeObject>(resource: Resource<T>, object: T): T {
  if (object.apiVersion && object.kind) return object;
  return { ...object, apiVersion: resource.apiVersion, kind: resource.kind };
}
