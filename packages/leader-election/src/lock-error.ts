/** The operations a {@link ResourceLock} performs. */
export type LockVerb = "get" | "create" | "update";

/**
 * A failed lock operation. The message names the verb and the resource
 * (`cannot update Lease default/my-operator: ...`) and, for an API error, the
 * HTTP status and the server's own message.
 */
export class LockError extends Error {
  override name = "LockError";
  /** The operation that failed. */
  readonly verb: LockVerb;
  /** The resource, e.g. `Lease default/my-operator`. */
  readonly resource: string;
  /** HTTP status for an API error; `undefined` for a transport failure or timeout. */
  readonly status: number | undefined;

  constructor(
    verb: LockVerb,
    resource: string,
    detail: string,
    options: { status?: number; cause?: unknown } = {},
  ) {
    super(`cannot ${verb} ${resource}: ${detail}`, { cause: options.cause });
    this.verb = verb;
    this.resource = resource;
    this.status = options.status;
  }

  /** True for 401 and 403: retrying will not help until credentials or RBAC change. */
  get isPermissionDenied(): boolean {
    return this.status === 401 || this.status === 403;
  }
}

/**
 * Another writer changed (or created) the lock first: the version quoted was
 * stale (HTTP 409). For leader election this is a lost race, not a fault.
 */
export class LockConflictError extends LockError {
  override name = "LockConflictError";
}
