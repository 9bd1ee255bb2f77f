import { CapturingLogger, FakeClock } from "@tessera/core/testing";
import type { KubeObject } from "@tessera/client";
import { InMemoryListerWatcher } from "@tessera/reflector/testing";
import { SharedIndexInformer, type SharedIndexInformerOptions } from "../src/index.js";

/** A small object of the in-memory collection. */
export interface Widget extends KubeObject {
  metadata: {
    name: string;
    namespace?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    managedFields?: unknown[];
  };
  spec?: { size: number };
}

export function widget(
  name: string,
  namespace = "default",
  size = 0,
  labels?: Record<string, string>,
): Widget {
  return {
    apiVersion: "test.example/v1",
    kind: "Widget",
    metadata: { name, namespace, labels },
    spec: { size },
  };
}

/** Lets every chain that needs no real time settle, up to `turns` event-loop turns, until `done()` holds. */
export async function settle(done: () => boolean = () => false, turns = 2_000): Promise<void> {
  for (let i = 0; i < turns && !done(); i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * An informer over an {@link InMemoryListerWatcher} on a fake clock, run by
 * {@link InformerHarness.start} and stopped by {@link InformerHarness.stop}.
 */
export class InformerHarness {
  readonly clock = new FakeClock();
  readonly lw = new InMemoryListerWatcher<Widget>();
  readonly logger = new CapturingLogger();
  readonly controller = new AbortController();
  readonly informer: SharedIndexInformer<Widget>;
  done: Promise<void> | undefined;

  constructor(options: Partial<SharedIndexInformerOptions<Widget>> = {}) {
    this.informer = new SharedIndexInformer<Widget>({
      listerWatcher: this.lw,
      clock: this.clock,
      logger: this.logger,
      reflector: { watchList: true },
      ...options,
    });
  }

  /** Runs the informer and lets it sync. */
  async start(): Promise<void> {
    this.done = this.informer.run(this.controller.signal);
    await settle(() => this.informer.hasSynced());
  }

  /** Aborts the run and waits for it to settle. */
  async stop(): Promise<void> {
    this.controller.abort();
    await this.done;
  }
}
