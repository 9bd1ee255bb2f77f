import { MetricGroup, type GroupCounter } from "@tessera/core";
import type { Meter } from "@opentelemetry/api";

/** What the informer's observable gauges read at collection time. */
export interface InformerGaugeSource {
  /** Objects in the cache. */
  cachedObjects(): number;
  /** Each handler's name and the notifications waiting for it. */
  handlerDepths(): Iterable<readonly [handler: string, depth: number]>;
}

/** The kinds of delivery counted per handler. */
export type DeliveryType = "add" | "update" | "delete" | "resync";

/**
 * The informer's OpenTelemetry instruments; every data point carries
 * `informer` (its name), `resource` and `cache` (which cache the informer
 * is: `shared` for a {@link SharedInformerFactory}'s, `ring` for a sharded
 * controller's share, `own` for one made directly), so two informers of one
 * kind in a process report apart:
 *
 * - `tessera_informer_objects` (gauge): objects cached
 * - `tessera_informer_handler_queue_depth` {handler} (gauge): notifications waiting for a handler
 * - `tessera_informer_events_delivered_total` {handler, type}: notifications a handler finished
 *   (`add`, `update`, `delete`, `resync`)
 * - `tessera_informer_handler_errors_total` {handler}: notifications whose callback threw or rejected
 *
 * The gauges are observed when the meter collects, so they cost nothing per
 * event. Internal to the package.
 */
export class InformerMetrics {
  private readonly group: MetricGroup;
  private readonly delivered: GroupCounter;
  private readonly errors: GroupCounter;

  constructor(
    meter: Meter,
    attributes: { readonly informer: string; readonly resource: string; readonly cache: string },
    source: InformerGaugeSource,
  ) {
    this.group = new MetricGroup(meter, { ...attributes });
    this.delivered = this.group.counter(
      "tessera_informer_events_delivered_total",
      "Notifications a handler finished handling",
    );
    this.errors = this.group.counter(
      "tessera_informer_handler_errors_total",
      "Notifications whose handler callback threw or rejected",
    );
    this.group.gauge("tessera_informer_objects", "Objects in the informer's cache", (report) =>
      report(source.cachedObjects()),
    );
    this.group.gauge(
      "tessera_informer_handler_queue_depth",
      "Notifications waiting for a handler",
      (report) => {
        for (const [handler, depth] of source.handlerDepths()) report(depth, { handler });
      },
    );
  }

  /** The per-handler instruments, with their attributes computed once. */
  forHandler(handler: string): HandlerMetrics {
    const delivered = (type: DeliveryType): { add(value?: number): void } =>
      this.delivered.bind({ handler, type });
    return new HandlerMetrics(
      {
        add: delivered("add"),
        update: delivered("update"),
        delete: delivered("delete"),
        resync: delivered("resync"),
      },
      this.errors.bind({ handler }),
    );
  }

  /** Stops observing the gauges (the informer stopped). */
  close(): void {
    this.group.close();
  }
}

/** Counters of one handler, bound to its attributes. Internal to the package. */
export class HandlerMetrics {
  constructor(
    private readonly delivered: Readonly<Record<DeliveryType, { add(value?: number): void }>>,
    private readonly errors: { add(value?: number): void },
  ) {}

  deliveredOne(type: DeliveryType): void {
    this.delivered[type].add();
  }

  failedOne(): void {
    this.errors.add();
  }
}
