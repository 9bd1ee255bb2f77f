import type { Meter } from "@opentelemetry/api";
import { MetricGroup } from "@tessera/core";

/**
 * The controller-runtime metrics the worker pool cannot know about:
 * timeouts, and "panics" (in JavaScript: a reconcile that threw a
 * programming fault, a TypeError, ReferenceError, RangeError or SyntaxError, or a
 * value that is not an Error). The pool counts reconciles, errors, terminal
 * errors, durations and workers.
 */
export class ControllerMetrics {
  private readonly group: MetricGroup;
  readonly panics: { add(value?: number): void };
  readonly timeouts: { add(value?: number): void };

  constructor(meter: Meter, controller: string) {
    this.group = new MetricGroup(meter, { controller });
    this.panics = this.group
      .counter(
        "controller_runtime_reconcile_panics_total",
        "Total number of reconciliation panics per controller",
      )
      .bind({});
    this.timeouts = this.group
      .counter(
        "controller_runtime_reconcile_timeouts_total",
        "Total number of reconciliation timeouts per controller",
      )
      .bind({});
    // Present at zero from the start, as controller-runtime initialises its counters.
    this.panics.add(0);
    this.timeouts.add(0);
  }

  close(): void {
    this.group.close();
  }
}

/** Whether a thrown value is what the runtime counts as a panic. */
export function isPanic(thrown: unknown): boolean {
  return (
    !(thrown instanceof Error) ||
    thrown instanceof TypeError ||
    thrown instanceof ReferenceError ||
    thrown instanceof RangeError ||
    thrown instanceof SyntaxError
  );
}
