import type { Status } from "./kube-object.js";

/** What an {@link ApiError} is about: the verb, the resource and the object. */
export interface ApiErrorContext {
  /** `get`, `list`, `create`, `update`, `patch`, `apply`, `delete`, `update status`, ... */
  readonly verb: string;
  /** The resource as kubectl names it: `configmaps`, `widgets.example.com`. */
  readonly resource: string;
  readonly namespace?: string | undefined;
  /** The object's name; absent for collection verbs. */
  readonly name?: string | undefined;
}

/** One field the server found invalid (a `Status`'s `details.causes`). */
export interface StatusCause {
  readonly field?: string;
  readonly reason?: string;
  readonly message?: string;
}

/**
 * The API server refused a request. The message names the verb, the
 * resource, the object and the server's reason and message:
 * `update widgets.example.com default/w1: 409 Conflict: Operation cannot be
 * fulfilled ...`. Subclasses tell the cases a reconciler handles apart;
 * the `is*` functions test for them.
 */
export class ApiError extends Error {
  override name = "ApiError";
  readonly verb: string;
  readonly resource: string;
  readonly namespace: string | undefined;
  readonly objectName: string | undefined;
  readonly causes: readonly StatusCause[];

  constructor(
    context: ApiErrorContext,
    /** The HTTP status code. */
    readonly code: number,
    /** The Status's reason (`NotFound`, `Conflict`, ...), or the status code's. */
    readonly reason: string,
    message: string,
    /** The server's Status, when it sent one. */
    readonly status?: Status,
    /** What went wrong below, for a failure without an answer. */
    options?: { cause?: unknown },
  ) {
    const causes = status?.details?.causes ?? [];
    const object = [context.namespace, context.name].filter((p) => p).join("/");
    const detail = causes.length
      ? `${message} (${causes.map((c) => `${c.field ?? "?"}: ${c.message ?? c.reason ?? "invalid"}`).join("; ")})`
      : message;
    super(
      `${context.verb} ${context.resource}${object ? ` ${object}` : ""}: ${code} ${reason}: ${detail}`,
      options,
    );
    this.verb = context.verb;
    this.resource = context.resource;
    this.namespace = context.namespace;
    this.objectName = context.name;
    this.causes = causes;
  }
}

/** 404: the object (or the resource) does not exist. */
export class NotFoundError extends ApiError {
  override name = "NotFoundError";
}
/** 409 AlreadyExists: a create found an object of that name. */
export class AlreadyExistsError extends ApiError {
  override name = "AlreadyExistsError";
}
/** 409 Conflict: the object changed since it was read (stale resourceVersion) or apply fields conflict. */
export class ConflictError extends ApiError {
  override name = "ConflictError";
}
/** 422 Invalid: the object fails validation; `causes` lists the fields. */
export class InvalidError extends ApiError {
  override name = "InvalidError";
}
/** 403: RBAC does not allow the verb on the resource. */
export class ForbiddenError extends ApiError {
  override name = "ForbiddenError";
}
/** 401: the credentials were not accepted. */
export class UnauthorizedError extends ApiError {
  override name = "UnauthorizedError";
}

/** The {@link ApiError} subclass for `code` and `reason`. */
export function apiErrorFor(
  context: ApiErrorContext,
  code: number,
  reason: string,
  message: string,
  status?: Status,
): ApiError {
  const kind =
    code === 404
      ? NotFoundError
      : code === 409
        ? reason === "AlreadyExists"
          ? AlreadyExistsError
          : ConflictError
        : code === 422
          ? InvalidError
          : code === 403
            ? ForbiddenError
            : code === 401
              ? UnauthorizedError
              : ApiError;
  return new kind(context, code, reason, message, status);
}

export const isNotFound = (error: unknown): error is NotFoundError => error instanceof NotFoundError;
export const isAlreadyExists = (error: unknown): error is AlreadyExistsError =>
  error instanceof AlreadyExistsError;
export const isConflict = (error: unknown): error is ConflictError => error instanceof ConflictError;
export const isInvalid = (error: unknown): error is InvalidError => error instanceof InvalidError;
export const isForbidden = (error: unknown): error is ForbiddenError => error instanceof ForbiddenError;
export const isUnauthorized = (error: unknown): error is UnauthorizedError =>
  error instanceof UnauthorizedError;
