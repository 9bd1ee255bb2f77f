import { strict as assert } from "node:assert";
import type { Manager } from "../../../src/index.js";

/** One reconcile of a ring member: who ran it, for which object, and when (any one clock per test). */
export interface ReconcileSpan {
  readonly member: string;
  readonly name: string;
  readonly start: number;
  readonly end: number;
}

/**
 * The managers a test starts (ring members, usually): each runs until
 * {@link RunningManagers.stopAll}, which aborts them and waits for each run
 * to settle, in the order they were started.
 */
export class RunningManagers {
  private readonly stops: (() => Promise<void>)[] = [];

  /** Runs `manager` and resolves with it once its caches synced. */
  async start(manager: Manager, syncTimeoutMs = 60_000): Promise<Manager> {
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    this.stops.push(async () => {
      stop.abort();
      await running;
    });
    assert.ok(await manager.waitForSync(AbortSignal.timeout(syncTimeoutMs)), "the manager synced");
    return manager;
  }

  async stopAll(): Promise<void> {
    for (const stop of this.stops.splice(0)) await stop();
  }
}

/** Each pair of spans of one object by two members that overlap in time, as `name: member and member`. */
export function overlappingSpans(spans: readonly ReconcileSpan[]): string[] {
  const byName = new Map<string, ReconcileSpan[]>();
  for (const span of spans) byName.set(span.name, [...(byName.get(span.name) ?? []), span]);
  const found: string[] = [];
  for (const [name, list] of byName) {
    const mine = [...list].sort((x, y) => x.start - y.start);
    for (let i = 1; i < mine.length; i++)
      for (let j = 0; j < i; j++) {
        const [a, b] = [mine[j]!, mine[i]!];
        if (a.member !== b.member && b.start < a.end) found.push(`${name}: ${a.member} and ${b.member}`);
      }
  }
  return found;
}
