/**
 * The part of an object's metadata the reflector reads. Objects are kept as
 * the plain JSON the server sent: timestamps are strings, whatever type
 * parameter is used to view them.
 */
export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
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
