import { describeItem } from "./describe-item.js";
import { isTerminalError } from "./terminal-error.js";

/**
 * Processing an item failed: the handler threw, rejected or timed out. The
 * worker pool reports this error to its logger and `onError`, and requeues
 * the item with rate limiting unless the failure is {@link WorkItemError.terminal}.
 * `cause` holds what the handler threw (or a {@link WorkItemTimeoutError}).
 */
export class WorkItemError<T = unknown> extends Error {
  override readonly name = "WorkItemError";
  /** What the pool was doing when it failed. */
  readonly verb = "process";
  /**
   * The handler threw a `TerminalError` (or an error caused by one): the item
   * is not requeued. A timeout is never terminal.
   */
  readonly terminal: boolean;

  constructor(
    /** The queue's name. */
    readonly queue: string,
    /** The item (the resource key) that failed. */
    readonly item: T,
    /** How many times the item had been requeued before this attempt. */
    readonly attempt: number,
    cause: unknown,
  ) {
    const terminal = isTerminalError(cause);
    super(
      `workqueue "${queue}": process ${describeItem(item)} (attempt ${attempt + 1}) failed` +
        `${terminal ? " for good (terminal, not retried)" : ""}: ${causeMessage(cause)}`,
      { cause },
    );
    this.terminal = terminal;
  }
}

/** A handler ran longer than the pool's per-item timeout; the abort reason of its signal. */
export class WorkItemTimeoutError<T = unknown> extends Error {
  override readonly name = "WorkItemTimeoutError";

  constructor(
    readonly queue: string,
    readonly item: T,
    readonly timeoutMs: number,
  ) {
    super(`workqueue "${queue}": process ${describeItem(item)} timed out after ${timeoutMs} ms`);
  }
}

/**
 * The worker pool was stopped and its drain timeout passed while the handler
 * was still running; the abort reason of the handler's signal.
 */
export class WorkerPoolStoppedError<T = unknown> extends Error {
  override readonly name = "WorkerPoolStoppedError";

  constructor(
    readonly queue: string,
    readonly item: T,
    /** The pool's `drainTimeoutMs`. */
    readonly drainTimeoutMs: number,
  ) {
    super(
      `workqueue "${queue}": worker pool stopped; process ${describeItem(item)} still running after the ${drainTimeoutMs} ms drain timeout`,
    );
  }
}

function causeMessage(cause: unknown): string {
  if (cause instanceof Error) return cause.message;
  return describeItem(cause);
}
