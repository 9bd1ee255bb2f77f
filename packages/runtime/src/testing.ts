/**
 * @tessera/runtime/testing: test a reconciler in milliseconds, without a
 * cluster. A {@link FakeClient} that answers as the API server does (held to
 * it by a differential test against a real kube-apiserver), interceptors
 * that fail, delay or answer chosen calls, and the server's errors to throw
 * from them, `reconcileOnce` for one reconcile and `testManager` for the
 * controllers as the manager runs them. Tests against the real API server
 * (`@tessera/testenv`) stay the reference; see docs/how-to/testing.md for
 * when to use which.
 */
export { FakeClient } from "./testing/fake-client.js";
export type { FakeClientOptions, FakeWrite } from "./testing/fake-client.js";
export type {
  FakeVerb,
  InterceptedCall,
  InterceptMatch,
  Interceptor,
  Interception,
} from "./testing/interceptors.js";
export { serverErrors } from "./testing/server-errors.js";
export { reconcileOnce } from "./testing/reconcile-once.js";
export type { ReconcileOnceOptions, ReconcileOnceOutcome } from "./testing/reconcile-once.js";
export { CapturingEventRecorder } from "./testing/capturing-event-recorder.js";
export type { RecordedEvent } from "./testing/capturing-event-recorder.js";
export { testManager, TestManager } from "./testing/test-manager.js";
export type {
  TestManagerOptions,
  SettleOptions,
  ReconcileRecord,
  ReconcilerClass,
} from "./testing/test-manager.js";
export type { FakeChange } from "./testing/fake-client.js";
