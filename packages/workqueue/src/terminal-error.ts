/**
 * Thrown by a handler when retrying cannot help: the object is invalid, a
 * precondition will not change by itself. The worker pool logs it, counts it
 * (`controller_runtime_terminal_reconcile_errors_total`), forgets the item's
 * rate-limiter history and does not requeue the item; a later add (a new
 * event for the object) processes it again. Any other throw is a
 * rate-limited retry.
 *
 * Wrap the underlying error as the cause:
 *
 * ```ts
 * throw new TerminalError(`spec.replicas must be positive, got ${replicas}`, { cause: error });
 * ```
 *
 * As controller-runtime's `errors.Is(err, TerminalError(nil))` unwraps, an
 * error is terminal when it is a `TerminalError` or when one is in its
 * `cause` chain ({@link isTerminalError}), so a library that wraps a
 * handler's error keeps it terminal. The members of an `AggregateError` are
 * not searched: one terminal failure among several does not stop the retries
 * the others need.
 */
export class TerminalError extends Error {
  override readonly name = "TerminalError";
}

/** The deepest `cause` chain followed; a longer (or cyclic) chain is cut there. */
const MAX_CAUSE_DEPTH = 32;

/**
 * Whether `error` is a {@link TerminalError} or has one in its `cause` chain:
 * what the worker pool asks of every failure before it requeues the item.
 */
export function isTerminalError(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && current instanceof Error; depth++) {
    if (current instanceof TerminalError) return true;
    current = current.cause;
  }
  return false;
}
