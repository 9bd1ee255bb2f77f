/**
 * @tessera/core/testing: the fakes Tessera's own tests use, shipped for
 * yours: a FakeClock that drives every timer and backoff, a logger that keeps
 * its lines, and a meter whose data points a test reads back.
 */
export { FakeClock } from "./fake-clock.js";
export type { FakeClockOptions } from "./fake-clock.js";
export { CapturingLogger } from "./capturing-logger.js";
export type { LogLine } from "./capturing-logger.js";
export { TestMetrics } from "./test-metrics.js";
export type { PointValue } from "./test-metrics.js";
