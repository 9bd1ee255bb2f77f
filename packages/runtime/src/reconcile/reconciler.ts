import type { Logger } from "@tessera/core";
import type { KubeObject } from "@tessera/client";
import type { Request } from "./request.js";
import type { Result } from "./result.js";

/** What a reconcile gets besides its {@link Request}. */
export interface ReconcileContext<T extends KubeObject = KubeObject> {
  /**
   * Aborts when the reconcile should stop: the manager shuts down past its
   * drain deadline, leadership or the key's shard slot was lost, or the
   * per-reconcile timeout passed. Pass it to every call that waits.
   */
  readonly signal: AbortSignal;
  /** Fields: controller, namespace, name, attempt. */
  readonly logger: Logger;
  /** 1 on the first try of this request, then one more per retry after a failure. */
  readonly attempt: number;
  /** The primary object from the cache, or `undefined` once it is gone. */
  current(): T | undefined;
}

/**
 * The one method an operator author writes: read the object (from
 * `ctx.current()` or the cache-backed client), make the world match it,
 * return. Throw to retry with backoff; throw a `TerminalError` when retrying
 * cannot help.
 */
export interface Reconciler<T extends KubeObject = KubeObject> {
  reconcile(request: Request, ctx: ReconcileContext<T>): Result | Promise<Result>;
}

/** A reconcile written as a function (the builder's `complete(fn)`). */
export type ReconcileFunction<T extends KubeObject = KubeObject> = (
  request: Request,
  ctx: ReconcileContext<T>,
) => Result | Promise<Result>;
