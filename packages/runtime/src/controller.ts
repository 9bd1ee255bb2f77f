/**
 * @tessera/runtime/controller: the parts a manager assembles a controller
 * from, for tests and for code that runs a controller without a manager:
 * the controller loop, requests and their queue keys, the cached client,
 * the Kubernetes event recorder, and the errors a manager stops with.
 */
export { Controller } from "./reconcile/controller.js";
export type { ControllerRunOptions, ControllerSource } from "./reconcile/controller.js";
export { requestFor, requestFromKey, requestKey } from "./reconcile/request.js";
export { ManagedFinalizer, addFinalizerPatch, removeFinalizerPatch } from "./reconcile/managed-finalizer.js";
export type { ManagedFinalizerOptions, Cleanup } from "./reconcile/managed-finalizer.js";
export { CachedClient } from "./client/cached-client.js";
export type { CachedClientOptions } from "./client/cached-client.js";
export { ReadYourWrites } from "./client/read-your-writes.js";
export type { ReadYourWritesOptions, ReadYourWritesOutcome } from "./client/read-your-writes.js";
export { DeclaredCaches } from "./client/declared-caches.js";
export type { DeclaredCache } from "./client/declared-caches.js";
export { KubeEventRecorder } from "./client/kube-event-recorder.js";
export type { KubeEventRecorderOptions } from "./client/kube-event-recorder.js";
export type { EventInput, EventType } from "./client/event-recorder.js";
export { LeaderElectionLostError } from "./manager/leader-election-lost-error.js";
export { RingMemberFencedError } from "./manager/ring-member-fenced-error.js";
export { UnboundTokenError } from "./plugin/unbound-token-error.js";
export { EXIT_INVALID_CONFIG } from "./manager/run-main.js";
export type { RunMainOptions } from "./manager/run-main.js";
export { RelatedObjects, CONTROLLER_OWNER_INDEX, controllerOwnerUid } from "./reconcile/related-objects.js";
export type { RelatedObjectsOptions } from "./reconcile/related-objects.js";
export type { TriggerDeclaration } from "./reconcile/trigger-source.js";
