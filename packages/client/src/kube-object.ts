/** An owner reference in `metadata.ownerReferences`. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  /** True on the one owner that manages the object (its controller). */
  controller?: boolean;
  /** With foreground deletion, the owner is not deleted before this object is. */
  blockOwnerDeletion?: boolean;
}

/**
 * An object's metadata (`metav1.ObjectMeta`), the one metadata type of
 * every package: of custom resources, of the types `tessera generate`
 * writes, of metadata-only caches. Objects are kept as the plain JSON the
 * server sent, so timestamps are RFC 3339 strings; the models of
 * @kubernetes/client-node, which type them as `Date`, fit too.
 */
export interface ObjectMeta {
  name?: string;
  /** A prefix the server completes to a unique name on create when `name` is empty. */
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  /** Bumped by the server on every change of the desired state (spec), not of status or metadata. */
  generation?: number;
  creationTimestamp?: string | Date;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  /** Keys that hold a deleted object until each is removed. */
  finalizers?: string[];
  /** Set when a delete was asked for; the object stays while `finalizers` is not empty. */
  deletionTimestamp?: string | Date;
  deletionGracePeriodSeconds?: number;
  /** Which field manager owns which fields (server-side apply). */
  managedFields?: unknown[];
}

/**
 * Any Kubernetes object, as far as the reflector is concerned. The models of
 * @kubernetes/client-node (`V1ConfigMap`, ...) fit it.
 */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/** Metadata of a list response. */
export interface ListMeta {
  /** Where a WATCH started after this list resumes. */
  resourceVersion?: string;
  /** Token for the next page; absent or empty on the last page. */
  continue?: string;
  remainingItemCount?: number;
  /**
   * Present when the server filtered the list by a `shardSelector` (KEP-5866):
   * the canonical selector it applied. Absent means it did not filter.
   */
  shardInfo?: { selector?: string };
}

/** One page of a LIST response. */
export interface ObjectList<T> {
  apiVersion?: string;
  kind?: string;
  metadata?: ListMeta;
  items: T[];
}

/** A `Status` object, as sent with HTTP errors and in watch ERROR events. */
export interface Status {
  kind?: string;
  apiVersion?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    causes?: { reason?: string; message?: string; field?: string }[];
    retryAfterSeconds?: number;
  };
}
