/**
 * @tessera/runtime/codegen: what `tessera generate` reads from an operator's
 * compiled code: the controller builder that records a reconciler's
 * declarations (kinds, watches, permissions, the managed finalizer), and
 * the webhooks' (the schema helpers are in `@tessera/runtime/validation`).
 */
export { ControllerBuilder } from "./builder/controller-builder.js";
export type { ControllerDefinition, WatchDeclaration, PermissionRule } from "./builder/controller-builder.js";
export { BuilderError } from "./builder/builder-error.js";
export { cleanupDeclarationProblems } from "./builder/finalizer-declaration.js";
export type { Kind } from "./builder/kind.js";
export type { CacheOptions, IndexFunction } from "./builder/cache-options.js";
export { WebhookBuilder } from "./webhook/webhook-builder.js";
export type { WebhookOptions, WebhookMethods } from "./webhook/webhook-builder.js";
export { webhookDefinitionOf } from "./webhook/webhook-definition-of.js";
export {
  admissionWebhookPath,
  webhookResourceNames,
  CONVERSION_WEBHOOK_PATH,
} from "./webhook/webhook-definition.js";
export type {
  WebhookDefinition,
  AdmissionWebhookDefinition,
  ConversionWebhookDefinition,
  AdmissionOperation,
  FailurePolicy,
  WebhookResourceNames,
} from "./webhook/webhook-definition.js";
