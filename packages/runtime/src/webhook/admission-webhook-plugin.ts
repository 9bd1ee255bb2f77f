import type { KubeObject } from "@tessera/client";
import type { Logger } from "@tessera/core";
import type { AdmissionRequest, AdmissionUserInfo } from "./admission-review.js";
import type { AdmissionResult } from "./admission-result.js";
import type { WebhookBuilder } from "./webhook-builder.js";
import type { AdmissionOperation } from "./webhook-definition.js";

/** What a webhook method gets besides the object. */
export interface AdmissionContext<T extends KubeObject = KubeObject> {
  /** Aborts at the handler's deadline (shorter than the API server's `timeoutSeconds`) or at shutdown. */
  readonly signal: AbortSignal;
  readonly operation: AdmissionOperation;
  /** True when the request will not be persisted (`kubectl --dry-run=server`): skip side effects. */
  readonly dryRun: boolean;
  /** Who asked. */
  readonly userInfo: AdmissionUserInfo;
  /** Fields: webhook (its path), operation, namespace, name, uid. */
  readonly logger: Logger;
  /** The whole AdmissionRequest, for what the fields above leave out (subResource, options, requestKind). */
  readonly request: AdmissionRequest<T>;
}

/** What `validate*()` may return: nothing (allowed) or a result of {@link Admission}. */
export type ValidationOutcome = AdmissionResult | void;

/**
 * An admission webhook for one kind, kubebuilder's `Defaulter` and
 * `Validator` in one class: the class an operator author writes and
 * registers with `manager.register(WidgetWebhook)`, built by the same
 * injection as a reconciler (`static inject`). Implement what the webhook
 * does; `tessera generate` and the manager serve exactly that:
 *
 * - `default()`: a mutating webhook on CREATE and UPDATE; return the object
 *   as it should be (or change it in place and return nothing): Tessera
 *   sends the API server the JSON patch between the two;
 * - `validateCreate/Update/Delete()`: a validating webhook on those operations.
 *
 * ```ts
 * class WidgetWebhook implements AdmissionWebhookPlugin<Widget> {
 *   webhook(on: WebhookBuilder) {
 *     return on.for(Widgets);
 *   }
 *   default(widget: Widget) {
 *     widget.spec.replicas ??= 1;
 *     return widget;
 *   }
 *   validateCreate(widget: Widget) {
 *     return widget.spec.replicas! < 1 ? Admission.deny("a Widget needs a replica") : Admission.allow();
 *   }
 * }
 * ```
 */
export interface AdmissionWebhookPlugin<T extends KubeObject = KubeObject> {
  /** Declares the kind admitted, given an empty builder. */
  webhook(on: WebhookBuilder): WebhookBuilder<T>;
  default?(object: T, ctx: AdmissionContext<T>): T | void | Promise<T | void>;
  validateCreate?(object: T, ctx: AdmissionContext<T>): ValidationOutcome | Promise<ValidationOutcome>;
  validateUpdate?(
    object: T,
    oldObject: T,
    ctx: AdmissionContext<T>,
  ): ValidationOutcome | Promise<ValidationOutcome>;
  /** Called with the object as stored (DELETE sends no new object). */
  validateDelete?(object: T, ctx: AdmissionContext<T>): ValidationOutcome | Promise<ValidationOutcome>;
}

/**
 * An admission webhook plugin of any kind, as `manager.register` and the
 * registry take it (a plugin's methods take its own kind's objects).
 */
export interface AnyAdmissionWebhookPlugin {
  webhook(on: WebhookBuilder): WebhookBuilder<never>;
  default?(object: never, ctx: never): unknown;
  validateCreate?(object: never, ctx: never): unknown;
  validateUpdate?(object: never, oldObject: never, ctx: never): unknown;
  validateDelete?(object: never, ctx: never): unknown;
}
