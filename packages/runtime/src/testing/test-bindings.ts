import { metrics, trace } from "@opentelemetry/api";
import type { Container } from "inversify";
import { defaultRandom, type Clock } from "@tessera/core";
import type { CapturingLogger } from "@tessera/core/testing";
import type { ApiClient } from "@tessera/client";
import { Tokens, type Token } from "../plugin/tokens.js";
import type { CapturingEventRecorder } from "./capturing-event-recorder.js";
import type { FakeClient } from "./fake-client.js";

/** What a test binds in place of the manager's services. */
export interface TestServices {
  readonly client: FakeClient;
  readonly clock: Clock;
  readonly logger: CapturingLogger;
  readonly recorder: CapturingEventRecorder;
  /** Further bindings (`[token, value]`), replacing any of the above. */
  readonly provide?: readonly (readonly [Token<unknown>, unknown])[];
}

/**
 * Binds the test doubles `reconcileOnce` and the test manager build
 * reconcilers with: the fake for `Tokens.Client`, `Tokens.ApiClient` and
 * `Tokens.ApiReader`, the clock, the capturing logger and event recorder, a
 * no-op meter and tracer, then what `provide` adds.
 */
export function bindTestServices(container: Container, services: TestServices): void {
  const constant = <T>(token: Token<T>, value: T): void => {
    container.bind<T>(token).toConstantValue(value);
  };
  constant(Tokens.Client, services.client);
  constant(Tokens.ApiReader, services.client);
  // The fake is no ApiClient by class, but answers every call an ApiClient does.
  constant(Tokens.ApiClient, services.client as unknown as ApiClient);
  constant(Tokens.Clock, services.clock);
  constant(Tokens.Random, defaultRandom);
  constant(Tokens.Logger, services.logger);
  constant(Tokens.EventRecorder, services.recorder);
  constant(Tokens.Meter, metrics.getMeter("@tessera/runtime/testing"));
  constant(Tokens.Tracer, trace.getTracer("@tessera/runtime/testing"));
  bindProvided(container, services.provide ?? []);
}

/** Binds each `[token, value]`, replacing what the token was bound to. */
export function bindProvided(
  container: Container,
  provide: readonly (readonly [Token<unknown>, unknown])[],
): void {
  for (const [token, value] of provide) {
    if (container.isBound(token)) container.unbind(token);
    container.bind(token).toConstantValue(value);
  }
}
