/**
 * @tessera/runtime: where operator authors meet Tessera. A `Manager` owns one
 * dependency-injection container (inversify) with the clients, caches, clock,
 * logger and metrics; reconcilers registered with it run as controllers,
 * leader-elected, sharded across replicas, or on every replica; it serves
 * health and metrics and shuts down gracefully.
 */
export type { Request } from "./reconcile/request.js";
export { requestFor, requestFromKey } from "./reconcile/request.js";
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
export type { EventRecorder, EventInput, EventType } from "./client/event-recorder.js";
export type { ManagerConfig, ManagerConfigInput, ControllerConfig, ControllerMode } from "./config/manager-config.js";
export { Tokens, token } from "./plugin/tokens.js";
export type { Token } from "./plugin/tokens.js";
