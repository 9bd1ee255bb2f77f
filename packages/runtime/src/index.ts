/**
 * @tessera/runtime: where operator authors meet Tessera. A `Manager` owns one
 * dependency-injection container (inversify) with the clients, caches, clock,
 * logger and metrics; reconcilers registered with it run as controllers,
 * leader-elected, sharded across replicas, or on every replica; it serves
 * health and metrics and shuts down gracefully.
 */
export type { Request } from "./reconcile/request.js";
export { requestFor, requestFromKey, requestKey } from "./reconcile/request.js";
export type { Result } from "./reconcile/result.js";
export type { Reconciler, ReconcileContext, ReconcileFunction } from "./reconcile/reconciler.js";
export type {
  Client,
  ObjectRef,
  ListOptions,
  WriteOptions,
  Patch,
  JsonPatchOperation,
  ApplyOptions,
  DeleteOptions,
  ApplyConfiguration,
} from "./client/client.js";
export type { RestMapper, GroupVersionKind } from "./client/rest-mapper.js";
export { ApiClient } from "./client/api-client.js";
export type { ApiClientOptions } from "./client/api-client.js";
export { CachedClient } from "./client/cached-client.js";
export { KubeTransport, TransportError } from "./client/kube-transport.js";
export type { TransportRequest } from "./client/kube-transport.js";
export {
  ApiError,
  NotFoundError,
  AlreadyExistsError,
  ConflictError,
  InvalidError,
  ForbiddenError,
  UnauthorizedError,
  isNotFound,
  isAlreadyExists,
  isConflict,
  isInvalid,
  isForbidden,
} from "./client/api-error.js";
export type { ApiErrorContext, StatusCause } from "./client/api-error.js";
export { DiscoveryRestMapper, KindNotFoundError } from "./client/discovery-rest-mapper.js";
export { KubeEventRecorder } from "./client/kube-event-recorder.js";
export type { KubeEventRecorderOptions } from "./client/kube-event-recorder.js";
export { labelMatcher, labelSelectorString, LabelSelectorError } from "./client/label-selector.js";
export type { LabelSelectorInput } from "./client/label-selector.js";
export type { EventRecorder, EventInput, EventType } from "./client/event-recorder.js";
export type {
  ManagerConfig,
  ManagerConfigInput,
  ControllerConfig,
  ControllerMode,
} from "./config/manager-config.js";
export { loadConfig, configEnvironmentVariables } from "./config/load-config.js";
export type { LoadConfigOptions, SchemaNode } from "./config/load-config.js";
export { managerConfigSchema } from "./config/config-schema.js";
export { ConfigError } from "./config/config-error.js";
export type { ConfigViolation } from "./config/config-error.js";
export { Tokens, token } from "./plugin/tokens.js";
export type { Token } from "./plugin/tokens.js";
export { ControllerBuilder } from "./builder/controller-builder.js";
export type {
  ControllerDefinition,
  WatchDeclaration,
  WatchOptions,
  PermissionRule,
} from "./builder/controller-builder.js";
export type { ControllerOptions } from "./builder/controller-options.js";
export { BuilderError } from "./builder/builder-error.js";
export type { Kind } from "./builder/kind.js";
export type { Predicate } from "./predicate/predicate.js";
export { admits } from "./predicate/predicate.js";
export {
  generationChanged,
  labelsChanged,
  annotationsChanged,
  resourceVersionChanged,
  predicate,
  and,
  or,
  not,
} from "./predicate/predicates.js";
export { enqueueForObject, enqueueForOwner } from "./handler/event-handler.js";
export type { MapToRequests } from "./handler/event-handler.js";
export type { OwnerReference, RuntimeObjectMeta } from "./handler/object-metadata.js";
export { metadataOf } from "./handler/object-metadata.js";
export { Controller } from "./reconcile/controller.js";
export type { ControllerRunOptions, ControllerSource } from "./reconcile/controller.js";
export type {
  ReconcilerPlugin,
  PluginClass,
  InjectTokens,
  ManagedRunnable,
  Plugin,
} from "./plugin/plugin.js";
export { Manager } from "./manager/manager.js";
export { UnboundTokenError } from "./plugin/unbound-token-error.js";
export { loadKubeConfig, KubeConfigError } from "./kubeconfig/load-kube-config.js";
export type { LoadKubeConfigOptions, LoadedKubeConfig } from "./kubeconfig/load-kube-config.js";
export { LeanKubeConfig } from "./kubeconfig/lean-kube-config.js";
export type { LeanCluster, LeanCredentials } from "./kubeconfig/lean-kube-config.js";
export { HealthChecks } from "./server/health-checks.js";
export type { Check, CheckResult, ProbeAnswer } from "./server/health-checks.js";
export { EndpointServer } from "./server/endpoint-server.js";
export type { EndpointServerOptions, EndpointHandler } from "./server/endpoint-server.js";
export { parseBindAddress } from "./server/bind-address.js";
export type { BindAddress } from "./server/bind-address.js";
export { PrometheusMetrics } from "./server/prometheus-metrics.js";
export { DecisionCache } from "./server/decision-cache.js";
export type { DecisionCacheOptions } from "./server/decision-cache.js";
export { TokenReviewAuthenticator } from "./server/token-review-authenticator.js";
export type {
  Authentication,
  TokenReview,
  TokenReviewAuthenticatorOptions,
  UserInfo,
} from "./server/token-review-authenticator.js";
export { SubjectAccessReviewAuthorizer } from "./server/subject-access-review-authorizer.js";
export type {
  Authorization,
  SubjectAccessReview,
  SubjectAccessReviewAuthorizerOptions,
} from "./server/subject-access-review-authorizer.js";
export { withAuthenticationAndAuthorization } from "./server/authenticated-handler.js";
export type { AuthenticationAndAuthorizationOptions } from "./server/authenticated-handler.js";
export { readServingCertificate } from "./server/serving-certificate.js";
export type { ServingCertificate } from "./server/serving-certificate.js";
export { selfSignedCertificate } from "./server/self-signed-certificate.js";
export type { SelfSignedCertificateOptions } from "./server/self-signed-certificate.js";
export type { ManagerOptions } from "./manager/manager-options.js";
export { LeaderElectionLostError } from "./manager/leader-election-lost-error.js";
export { RingMemberFencedError } from "./manager/ring-member-fenced-error.js";
export { runMain, EXIT_INVALID_CONFIG } from "./manager/run-main.js";
export type { RunMainOptions } from "./manager/run-main.js";
export { TerminalError } from "@tessera/workqueue";
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
} from "./helpers/owner-references.js";
export { retryOnConflict, ConflictRetriesExhaustedError } from "./helpers/retry-on-conflict.js";
export type { RetryOnConflictOptions } from "./helpers/retry-on-conflict.js";
export { addFinalizer, removeFinalizer, finalize } from "./helpers/finalizers.js";
export { applyStatusIfChanged, containsFields } from "./helpers/status.js";
export {
  CrdSchemaValidator,
  CrdSchemaValidators,
  toJsonSchema,
  crdAjvOptions,
} from "./validation/crd-schema-validator.js";
export { validatingReconciler } from "./validation/schema-validating-reconciler.js";
export { CustomResourceDefinitions, readCrdFile } from "./validation/custom-resource-definitions.js";
export type { CustomResourceDefinition } from "./validation/custom-resource-definitions.js";
export { adoptOrphans } from "./helpers/adoption.js";
export type { AdoptionResult } from "./helpers/adoption.js";
export type { SchemaValidationOptions } from "./validation/schema-validating-reconciler.js";
export type {
  StructuralSchema,
  SchemaViolation,
  SchemaValidation,
  CustomResourceDefinitionLike,
} from "./validation/crd-schema-validator.js";
export type { FinalizerOptions, FinalizeOutcome } from "./helpers/finalizers.js";
