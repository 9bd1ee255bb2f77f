/**
 * @tessera/runtime: where operator authors meet Tessera. A `Manager` owns one
 * dependency-injection container (inversify) with the clients, caches, clock,
 * logger and metrics; reconcilers registered with it run as controllers,
 * leader-elected, sharded across replicas, or on every replica; it serves
 * health and metrics and shuts down gracefully.
 *
 * This entry point holds what an operator author writes with: the manager,
 * the reconciler contract and builder, the client, the resource handles of
 * every built-in kind, the helpers and the errors. The rest sits behind
 * subpaths named for what they hold: `/predicates`, `/server`, `/config`,
 * `/validation`, `/controller` (the controller loop and its parts) and
 * `/codegen` (what `tessera generate` reads). Admission webhooks and
 * conversions are written with what this entry point exports; their server
 * and review decoding are in `/server`.
 */
export { Manager } from "./manager/manager.js";
export type { ManagerOptions } from "./manager/manager-options.js";
export type { ManagerConfigInput } from "./config/manager-config.js";
export { runMain } from "./manager/run-main.js";
export { Tokens, token } from "./plugin/tokens.js";
export type { Token } from "./plugin/tokens.js";
export type {
  ReconcilerPlugin,
  PluginClass,
  InjectTokens,
  ManagedRunnable,
  Plugin,
} from "./plugin/plugin.js";
export type { Request } from "./reconcile/request.js";
export type { Result } from "./reconcile/result.js";
export { CleanupResult } from "./reconcile/cleanup-result.js";
export { ErrorResult } from "./reconcile/error-result.js";
export type { Reconciler, ReconcileContext, ReconcileFunction } from "./reconcile/reconciler.js";
export type {
  ControllerBuilder,
  WatchOptions,
  ForOptions,
  OwnsOptions,
} from "./builder/controller-builder.js";
export type { TriggerSource, TriggerOptions, RequestEmitter } from "./reconcile/trigger-source.js";
export type {
  AdmissionWebhookPlugin,
  AnyAdmissionWebhookPlugin,
  AdmissionContext,
  ValidationOutcome,
} from "./webhook/admission-webhook-plugin.js";
export type { WebhookBuilder, WebhookOptions } from "./webhook/webhook-builder.js";
export { Admission } from "./webhook/admission-result.js";
export type { AdmissionResult, DenyOptions, FieldCause } from "./webhook/admission-result.js";
export type {
  AdmissionReview,
  AdmissionRequest,
  AdmissionResponse,
  AdmissionStatus,
  AdmissionUserInfo,
} from "./webhook/admission-review.js";
export { defineConversion } from "./webhook/conversion.js";
export type { AnyConversion, Conversion, SpokeConversion, SpokeConversions } from "./webhook/conversion.js";
export type { ControllerOptions } from "./builder/controller-options.js";
export type { CacheOptions, IndexFunction } from "./builder/cache-options.js";
export { enqueueForObject, enqueueForOwner, enqueueForEveryOwner } from "./handler/event-handler.js";
export { requestOf } from "./reconcile/request.js";
export type { MapContext, MapToRequests } from "./handler/event-handler.js";
export { TerminalError } from "@tessera/workqueue";
export type { Clock, Logger } from "@tessera/core";
export type {
  Client,
  ApiReader,
  Reader,
  ObjectRef,
  Patch,
  ApplyConfiguration,
  KubeObject,
  ObjectMeta,
  OwnerReference,
  Resource,
} from "@tessera/client";
export {
  defineResource,
  ApiClient,
  ApiError,
  isNotFound,
  isAlreadyExists,
  isConflict,
  isInvalid,
  isForbidden,
} from "@tessera/client";
export * from "@tessera/client/resources";
export type { EventRecorder } from "./client/event-recorder.js";
export {
  setCondition,
  removeCondition,
  findCondition,
  isConditionTrue,
  isConditionFalse,
} from "./helpers/conditions.js";
export type { Condition, ConditionInput, ConditionsUpdate } from "./helpers/conditions.js";
export {
  setControllerReference,
  setOwnerReference,
  removeOwnerReference,
  controllerOf,
  OwnerReferenceError,
} from "@tessera/client";
export { retryOnConflict, ConflictRetriesExhaustedError } from "./helpers/retry-on-conflict.js";
export type { RetryOnConflictOptions } from "./helpers/retry-on-conflict.js";
export { addFinalizer, removeFinalizer, handleFinalizer } from "./helpers/finalizers.js";
export type { FinalizerOptions, HandleFinalizerOutcome } from "./helpers/finalizers.js";
export { applyStatusIfChanged } from "./helpers/status.js";
export { adoptOrphans } from "./helpers/adoption.js";
export type { AdoptionResult } from "./helpers/adoption.js";
