import type { Logger } from "@tessera/core";
import type { KubeObject } from "@tessera/client";
import type { Kind } from "../builder/kind.js";
import type { Request } from "./request.js";
import type { Result } from "./result.js";
import type { CleanupResult } from "./cleanup-result.js";
import type { ErrorResult } from "./error-result.js";

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
  /**
   * The children: the cached objects of `kind` whose controller owner
   * (`ownerReference` with `controller: true`) is this object (JOSDK's
   * `getSecondaryResources`). `kind` must be declared with `owns`: the
   * runtime keeps an index of every owned kind by its controller owner's
   * uid, so this is a lookup, never a LIST or a scan. Empty once the primary
   * is gone.
   *
   * ```ts
   * const configMaps = await ctx.owned(ConfigMaps);
   * ```
   */
  owned<U extends KubeObject>(kind: Kind<U>): Promise<U[]>;
  /**
   * The cached objects of `kind` filed under `value` in the index `index`
   * declared with `indexes` on `for`, `owns` or `watches`, e.g. the
   * Secrets a Widget names. An index nobody declared fails with
   * `IndexNotDeclared`, naming the fix.
   *
   * ```ts
   * const widgets = await ctx.related(Widgets, "spec.secretName", "db-password");
   * ```
   */
  related<U extends KubeObject>(kind: Kind<U>, index: string, value: string): Promise<U[]>;
}

/**
 * The one method an operator author writes: read the object (from
 * `ctx.current()` or the cache-backed client), make the world match it,
 * return. Throw to retry with backoff; throw a `TerminalError` when retrying
 * cannot help. Two optional methods go with it: `cleanup`, for a controller
 * with a managed finalizer, and `onError`, a retry policy per error.
 */
export interface Reconciler<T extends KubeObject = KubeObject> {
  reconcile(request: Request, ctx: ReconcileContext<T>): Result | Promise<Result>;
  /**
   * Tears down what a deleted object held, for a controller that declares
   * `finalizer(name)` (and only then: one without the other is an error at
   * registration). The runtime adds the finalizer before the first
   * reconcile of a live object; once the object has a deletionTimestamp it
   * calls `cleanup` instead of `reconcile`, and removes the finalizer when
   * it returns `CleanupResult.done` (or nothing). Return
   * `CleanupResult.keep({ requeueAfterMs })` to hold the object while
   * something goes away; throw to retry with backoff. It may run more than
   * once for one deletion, so make it idempotent.
   */
  cleanup?(object: T, ctx: ReconcileContext<T>): CleanupResult | void | Promise<CleanupResult | void>;
  /**
   * Decides the retry of an error it recognises, thrown by `reconcile` or
   * `cleanup`: `ErrorResult.requeueAfter(ms)`, `ErrorResult.terminal`, or
   * nothing for the controller's rate limiter (kube-rs's `error_policy`).
   * `object` is the primary from the cache (`undefined` once gone). If it
   * throws, the error is logged and the rate limiter decides.
   */
  onError?(
    error: unknown,
    object: T | undefined,
    ctx: ReconcileContext<T>,
  ): ErrorResult | Promise<ErrorResult>;
}

/** A reconcile written as a function (the builder's `complete(fn)`). */
export type ReconcileFunction<T extends KubeObject = KubeObject> = (
  request: Request,
  ctx: ReconcileContext<T>,
) => Result | Promise<Result>;
