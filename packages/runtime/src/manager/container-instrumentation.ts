import type { ResolvedInstrumentation } from "@tessera/core";
import type { Container } from "inversify";
import { Tokens } from "../plugin/tokens.js";

/** The clock, random source, logger, meter and tracer bound in a manager's container, for what the manager builds. */
export function containerInstrumentation(container: Container): ResolvedInstrumentation {
  return {
    clock: container.get(Tokens.Clock),
    random: container.get(Tokens.Random),
    logger: container.get(Tokens.Logger),
    meter: container.get(Tokens.Meter),
    tracer: container.get(Tokens.Tracer),
  };
}
