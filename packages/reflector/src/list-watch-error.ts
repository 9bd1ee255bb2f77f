import { ApiError, type Status } from "@tessera/client";

/** The request a {@link ListWatchError} arose in. */
export type ListWatchVerb = "list" | "watch";

/** Where a {@link ListWatchError} arose: which resource, which verb, which namespace. */
export interface ListWatchErrorContext {
  /** The resource as kubectl names it: `configmaps`, `widgets.example.com`. */
  resource: string;
  verb: ListWatchVerb;
  /** The namespace listed or watched; absent for all namespaces or cluster-scoped resources. */
  namespace?: string;
}

/**
 * Any failure of a LIST or a WATCH: an {@link ApiError} of the one family
 * every API failure belongs to. `code` is the HTTP status (or a Status's
 * `code`), 0 when no response was had; `reason` is the Kubernetes
 * `StatusReason` (`NotFound`, `Forbidden`, `Expired`, ...) or, for failures
 * that are not the server's answer, one of ours (`ConnectionFailed`,
 * `MalformedStream`, `InactivityTimeout`, `InitialEventsTimeout`,
 * `WatchListInconsistent`).
 */
export class ListWatchError extends ApiError {
  override name = "ListWatchError";
  declare readonly verb: ListWatchVerb;

  constructor(
    context: ListWatchErrorContext,
    code: number,
    reason: string,
    detail: string,
    options?: { cause?: unknown; status?: Status | undefined },
  ) {
    super(
      { verb: context.verb, resource: context.resource, namespace: context.namespace },
      code,
      reason,
      detail,
      options?.status,
      options,
    );
    // A collection, not an object: the message names the namespace listed, and no code when none came.
    const where = context.namespace ? ` in namespace "${context.namespace}"` : "";
    const status = code > 0 ? `${code} ${reason}` : reason;
    this.message = `${context.verb} ${context.resource}${where}: ${status}: ${detail}`;
  }
}

/** The server refused or failed the request: an HTTP error status, or an ERROR event in a watch. */
export class ApiStatusError extends ListWatchError {
  override name = "ApiStatusError";

  constructor(
    context: ListWatchErrorContext,
    code: number,
    reason: string,
    message: string,
    /** The Status object the server sent, when it sent one. */
    status: Status | undefined,
    /** `"response"` for an HTTP status, `"event"` for a watch ERROR event. */
    readonly source: "response" | "event",
  ) {
    super(context, code, reason, message, { status });
  }
}

/** The connection failed, was reset, or ended in the middle of a response. */
export class ConnectionError extends ListWatchError {
  override name = "ConnectionError";

  constructor(context: ListWatchErrorContext, detail: string, cause?: unknown) {
    super(context, 0, "ConnectionFailed", detail, { cause });
  }
}

/** A line of a watch stream (or a list body) that is not the JSON expected. */
export class StreamDecodeError extends ListWatchError {
  override name = "StreamDecodeError";

  constructor(
    context: ListWatchErrorContext,
    detail: string,
    /** The start of the offending text, at most 200 characters. */
    readonly excerpt: string,
    cause?: unknown,
  ) {
    super(context, 0, "MalformedStream", detail, { cause });
  }
}

/** The reflector gave up waiting on a watch: `InactivityTimeout` or `InitialEventsTimeout`. */
export class WatchDeadlineError extends ListWatchError {
  override name = "WatchDeadlineError";

  constructor(
    context: ListWatchErrorContext,
    reason: "InactivityTimeout" | "InitialEventsTimeout",
    readonly afterMs: number,
  ) {
    super(context, 0, reason, `nothing received for ${Math.round(afterMs)} ms`);
  }
}

/** A watch-list snapshot differed from a LIST at the same resourceVersion (the consistency check). */
export class WatchListInconsistencyError extends ListWatchError {
  override name = "WatchListInconsistencyError";

  constructor(
    context: ListWatchErrorContext,
    readonly resourceVersion: string,
    /** Keys only in the watch-list snapshot, only in the LIST, and in both at different versions. */
    readonly differences: { onlyInWatchList: string[]; onlyInList: string[]; differentVersion: string[] },
  ) {
    const sample = (keys: string[]): string => keys.slice(0, 5).join(", ") + (keys.length > 5 ? ", ..." : "");
    super(
      context,
      0,
      "WatchListInconsistent",
      `watch-list snapshot at resourceVersion ${resourceVersion} differs from a LIST at it: ` +
        `${differences.onlyInWatchList.length} only in the snapshot [${sample(differences.onlyInWatchList)}], ` +
        `${differences.onlyInList.length} only in the LIST [${sample(differences.onlyInList)}], ` +
        `${differences.differentVersion.length} at another version [${sample(differences.differentVersion)}]`,
    );
  }
}

/** Whether `err` says the requested resourceVersion is too old (410 Gone / Expired): the client must relist. */
export function isResourceExpired(err: unknown): boolean {
  return (
    err instanceof ListWatchError && (err.code === 410 || err.reason === "Expired" || err.reason === "Gone")
  );
}

/** Whether `err` is the server's `code` answer (404 NotFound, 403 Forbidden, ...). */
export function hasStatusCode(err: unknown, code: number): boolean {
  return err instanceof ApiStatusError && err.code === code;
}
