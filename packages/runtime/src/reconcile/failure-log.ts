import type { Logger } from "@tessera/core";
import { ApiError, KubeRequestError } from "@tessera/client";
import {
  RequeueAfterError,
  WorkItemTimeoutError,
  WorkerPoolStoppedError,
  type WorkItemError,
} from "@tessera/workqueue";
import { requestFromKey } from "./request.js";

/** The deepest `cause` chain looked through. */
const MAX_CAUSE_DEPTH = 16;

/**
 * A controller's failed reconciles, logged in proportion: the first failure
 * of a key (and each new error of it) once at error, with its cause; the
 * same error again for the same key at debug, with how many times it
 * repeated; the key's recovery once at info. The error itself (which the
 * JSON logger writes with its stack) is in the line only for errors that are
 * not the API server's or the transport's (the `@tessera/client` ApiError
 * family, whose message says all) nor a timeout: it points at a bug.
 * `attempt` counts from 1, as `ctx.attempt` does.
 */
export class FailureLog {
  /** The failing keys: the message of their last error and how often it came in a row. */
  private readonly failing = new Map<string, { message: string; repeats: number; failures: number }>();

  constructor(private readonly logger: Logger) {}

  /** A reconcile of `error.item` failed (the worker pool's report). */
  failed(error: WorkItemError<string>): void {
    const key = error.item;
    const { namespace, name } = requestFromKey(key);
    const retry = error.cause instanceof RequeueAfterError ? error.cause.requeueAfterMs : undefined;
    const cause = error.cause instanceof RequeueAfterError ? error.cause.cause : error.cause;
    const message = messageOf(cause);
    const before = this.failing.get(key);
    const fields = { namespace, name, attempt: error.attempt + 1 };
    const failures = (before?.failures ?? 0) + 1;
    if (error.terminal) this.failing.delete(key);
    else if (before?.message === message) {
      before.repeats++;
      before.failures = failures;
      this.logger.debug("reconcile failed again with the same error", {
        ...fields,
        repeats: before.repeats,
        error: message,
        ...(retry !== undefined ? { retryInMs: retry } : {}),
      });
      return;
    } else this.failing.set(key, { message, repeats: 0, failures });
    this.logger.error(
      error.terminal
        ? "reconcile failed for good (terminal): not retried until the object changes"
        : retry !== undefined
          ? "reconcile failed; retrying after the delay onError chose (repeats of this error are logged at debug)"
          : "reconcile failed; retrying with backoff (repeats of this error are logged at debug)",
      {
        ...fields,
        error: message,
        ...(retry !== undefined ? { retryInMs: retry } : {}),
        // The error itself, which the logger writes with its stack (read only then: with
        // source maps on, formatting a stack is costly), for errors whose message is not all.
        ...(isExpected(cause) ? {} : { cause }),
      },
    );
  }

  /** A reconcile of `key` succeeded: a key that was failing says so once. */
  succeeded(key: string): void {
    const before = this.failing.get(key);
    if (before === undefined) return;
    this.failing.delete(key);
    const { namespace, name } = requestFromKey(key);
    this.logger.info("reconcile succeeded after failing", { namespace, name, failures: before.failures });
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Whether `error` is one whose message is the whole story: an API or
 * transport error (also wrapped as a cause), a timeout, or an abort.
 */
function isExpected(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && current instanceof Error; depth++) {
    if (
      current instanceof ApiError ||
      current instanceof KubeRequestError ||
      current instanceof WorkItemTimeoutError ||
      current instanceof WorkerPoolStoppedError ||
      current.name === "AbortError"
    ) {
      return true;
    }
    current = current.cause;
  }
  return false;
}
