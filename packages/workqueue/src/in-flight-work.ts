/** What a handler gets besides the item. */
export interface WorkContext {
  /** Aborts when the item's timeout passes, or the pool's drain timeout after its run was stopped; pass it on to I/O. */
  readonly signal: AbortSignal;
  /** How many times the item has been requeued with rate limiting since it last succeeded (or failed terminally). */
  readonly attempt: number;
}

/**
 * One item being processed by a worker pool, and the context its handler
 * sees. The abort controller is created only when someone needs the signal
 * (a timeout, or the handler reading it), which keeps the common path cheap;
 * an abort before that is remembered and applied on creation. Internal to the
 * package.
 */
export class InFlightWork implements WorkContext {
  private controller: AbortController | undefined;
  private aborted = false;
  private reason: unknown;
  /** Resolves once the handler has returned and the item is done. */
  readonly settled: Promise<void>;
  /** Resolves {@link InFlightWork.settled}. */
  readonly settle: () => void;

  constructor(readonly attempt: number) {
    let settle: () => void = () => {};
    this.settled = new Promise<void>((resolve) => (settle = resolve));
    this.settle = settle;
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /** Aborts the signal with `reason` (the first reason wins). */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}
