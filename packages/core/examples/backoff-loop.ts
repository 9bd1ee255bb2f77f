import {
  Backoff,
  resolveInstrumentation,
  sleep,
  type Instrumentation,
  type ResolvedInstrumentation,
  type Runnable,
} from "@tessera/core";
import { FakeClock } from "@tessera/core/testing";

/** Retries `attempt` until it succeeds or the signal aborts, backing off between failures. */
export class Retrier implements Runnable {
  private readonly tools: ResolvedInstrumentation;
  private readonly backoff: Backoff;

  constructor(
    private readonly attempt: (signal: AbortSignal) => Promise<void>,
    options: Instrumentation = {},
  ) {
    this.tools = resolveInstrumentation(options, "retrier");
    this.backoff = new Backoff(this.tools.clock, this.tools.random);
  }

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        return await this.attempt(signal);
      } catch (error) {
        const waitMs = this.backoff.next();
        this.tools.logger.warn("attempt failed; retrying", { waitMs, error: String(error) });
        await sleep(this.tools.clock, waitMs, signal);
      }
    }
  }
}

// In a test, a FakeClock drives the backoff: no real time passes.
const clock = new FakeClock();
let failures = 2;
const retrier = new Retrier(
  (): Promise<void> => (failures-- > 0 ? Promise.reject(new Error("not yet")) : Promise.resolve()),
  { clock, random: () => 0 },
);
const done = retrier.run(new AbortController().signal);
await clock.advance(800 + 1_600); // two backoffs: 800 ms, then 1.6 s
await done;
