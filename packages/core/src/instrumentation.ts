import { createNoopMeter, metrics, trace, type Meter, type Tracer } from "@opentelemetry/api";
import { SystemClock, type Clock } from "./clock.js";
import { silentLogger, type Logger } from "./logger.js";
import { defaultRandom, type RandomSource } from "./random.js";

/**
 * What a Tessera component observes the world through, and what a test or
 * the runtime swaps: every package's options extend this one shape.
 */
export interface Instrumentation {
  /** Default: a {@link SystemClock}. Tests pass a `FakeClock`. */
  clock?: Clock;
  /** Default: `Math.random`. */
  random?: RandomSource;
  /** Default: {@link silentLogger}: a library says nothing unless given a logger. */
  logger?: Logger;
  /** Default: the global OpenTelemetry meter named for the package (a no-op until an SDK is registered). */
  meter?: Meter;
  /** Default: the global OpenTelemetry tracer named for the package (a no-op until an SDK is registered). */
  tracer?: Tracer;
}

/** {@link Instrumentation} with every default filled in. */
export type ResolvedInstrumentation = Readonly<Required<Instrumentation>>;

/**
 * The one defaulting rule for every package: what the caller gave, else the
 * system clock, `Math.random`, the silent logger, and the global meter and
 * tracer named `scope` (the package name, e.g. `"@tessera/reflector"`).
 */
export function resolveInstrumentation(options: Instrumentation, scope: string): ResolvedInstrumentation {
  return Object.freeze({
    clock: options.clock ?? new SystemClock(),
    random: options.random ?? defaultRandom,
    logger: options.logger ?? silentLogger,
    meter: options.meter ?? metrics.getMeter(scope),
    tracer: options.tracer ?? trace.getTracer(scope),
  });
}

/**
 * Whether `meter` is OpenTelemetry's no-op meter (what the global meter is
 * until an SDK is registered). A hot path may skip the clock readings behind
 * its measurements then: nothing would record them.
 */
export function isNoopMeter(meter: Meter): boolean {
  return meter === createNoopMeter();
}
