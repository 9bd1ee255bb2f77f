/**
 * @tessera/core: what every Tessera package shares and nothing Kubernetes:
 * one Clock, Logger and RandomSource, backoff and abort helpers, the Runnable
 * lifecycle and sync contract, instrumentation defaults and the metric helper,
 * and `node:http` loaded without its ES namespace's cost.
 */
export { SystemClock, MAX_TIMEOUT_MS } from "./clock.js";
export type { Clock, Timer } from "./clock.js";
export { isoTime } from "./iso-time.js";
export { sleep } from "./sleep.js";
export { silentLogger, withFields } from "./logger.js";
export type { Logger, LogFields } from "./logger.js";
export { JsonLogger } from "./json-logger.js";
export type { JsonLoggerOptions, LogLevel } from "./json-logger.js";
export { redactSecret } from "./redact-secret.js";
export { defaultRandom } from "./random.js";
export type { RandomSource } from "./random.js";
export { Backoff } from "./backoff.js";
export type { BackoffOptions } from "./backoff.js";
export { TimeoutError, timeoutScope, whenAborted, raceAbort, toError } from "./abort.js";
export type { AbortScope } from "./abort.js";
export type { Runnable, Syncable } from "./runnable.js";
export { resolveInstrumentation, isNoopMeter } from "./instrumentation.js";
export type { Instrumentation, ResolvedInstrumentation } from "./instrumentation.js";
export { MetricGroup } from "./metric-group.js";
export type {
  GroupCounter,
  GroupGauge,
  GroupHistogram,
  GaugeReport,
  InstrumentOptions,
} from "./metric-group.js";
export { MinHeap } from "./min-heap.js";
export { nodeBuiltin, nodeFs, nodeHttp, type NodeBuiltins } from "./node-builtin.js";
