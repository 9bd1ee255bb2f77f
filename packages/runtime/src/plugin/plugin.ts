import type { ContainerModule } from "inversify";
import type { Runnable } from "@tessera/core";
import type { KubeObject } from "@tessera/client";
import type { ControllerBuilder } from "../builder/controller-builder.js";
import type { Reconciler } from "../reconcile/reconciler.js";
import type { AnyAdmissionWebhookPlugin } from "../webhook/admission-webhook-plugin.js";
import type { AnyConversion } from "../webhook/conversion.js";
import type { Token } from "./tokens.js";

/**
 * A reconciler that declares its own controller: the class an operator
 * author writes and registers with `manager.register(WidgetReconciler)`.
 *
 * ```ts
 * class WidgetReconciler implements ReconcilerPlugin<Widget> {
 *   static readonly inject = [Tokens.Client] as const;
 *   constructor(private readonly client: Client) {}
 *   controller(on: ControllerBuilder) {
 *     return on.for(Widgets).owns(ConfigMaps);
 *   }
 *   async reconcile(request: Request, ctx: ReconcileContext<Widget>) { ... }
 * }
 * ```
 *
 * Beside `reconcile` it may have `cleanup(object, ctx)`, with
 * `finalizer(name)` in its declaration, and `onError(error, object, ctx)`
 * (see {@link Reconciler}).
 */
export interface ReconcilerPlugin<T extends KubeObject = KubeObject> extends Reconciler<T> {
  /** Declares what the controller reconciles, given an empty builder. */
  controller(on: ControllerBuilder): ControllerBuilder<T>;
}

/** The constructor parameters' tokens, in order: what `static inject` lists. */
export type InjectTokens<P extends readonly unknown[]> = { readonly [K in keyof P]: Token<P[K]> };

/**
 * A class the manager's container builds. Its constructor's dependencies are
 * named by `static inject` (tokens in parameter order; no decorators or
 * compiler flags needed), or by inversify's `@injectable()`/`@inject()`
 * decorators for authors who prefer them.
 */
export type PluginClass<I, P extends readonly unknown[] = never[]> = (new (...args: P) => I) & {
  readonly inject?: InjectTokens<P>;
};

/** A runnable that says whether it needs the leader (controller-runtime's `LeaderElectionRunnable`). */
export interface ManagedRunnable extends Runnable<unknown> {
  /** True: runs only on the elected replica, from election until shutdown. Default true, as in controller-runtime. */
  readonly needsLeader?: boolean;
}

/** What `manager.register` takes; `P` is a plugin class's constructor parameters, which its `inject` tokens must match. */
export type Plugin<P extends readonly unknown[] = never[]> =
  | PluginClass<ReconcilerPlugin<never>, P>
  | PluginClass<AnyAdmissionWebhookPlugin, P>
  | PluginClass<ManagedRunnable, P>
  | ContainerModule
  | ManagedRunnable
  | AnyConversion;
