import type {
  Attributes,
  BatchObservableCallback,
  Counter,
  Meter,
  ObservableGauge,
} from "@opentelemetry/api";

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
 * `informer` (its name) and `resource`:
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
  private readonly base: Attributes;
  private readonly delivered: Counter;
  private readonly errors: Counter;
  private readonly gauges: ObservableGauge[];
  private readonly observe: BatchObservableCallback;
  private closed = false;

  constructor(
    private readonly meter: Meter,
    informer: string,
    resource: string,
    source: InformerGaugeSource,
  ) {
    this.base = Object.freeze({ informer, resource });
    this.delivered = meter.createCounter("tessera_informer_events_delivered_total", {
      description: "Notifications a handler finished handling",
    });
    this.errors = meter.createCounter("tessera_informer_handler_errors_total", {
      description: "Notifications whose handler callback threw or rejected",
    });
    const objects = meter.createObservableGauge("tessera_informer_objects", {
      description: "Objects in the informer's cache",
    });
    const depth = meter.createObservableGauge("tessera_informer_handler_queue_depth", {
      description: "Notifications waiting for a handler",
    });
    this.gauges = [objects, depth];
    this.observe = (result) => {
      result.observe(objects, source.cachedObjects(), this.base);
      for (const [handler, n] of source.handlerDepths()) result.observe(depth, n, { ...this.base, handler });
    };
    meter.addBatchObservableCallback(this.observe, this.gauges);
  }

  /** The per-handler instruments, with their attributes computed once. */
  forHandler(handler: string): HandlerMetrics {
    const attributes = (type: DeliveryType): Attributes => Object.freeze({ ...this.base, handler, type });
    return new HandlerMetrics(
      this.delivered,
      this.errors,
      {
        add: attributes("add"),
        update: attributes("update"),
        delete: attributes("delete"),
        resync: attributes("resync"),
      },
      Object.freeze({ ...this.base, handler }),
    );
  }

  /** Stops observing the gauges (the informer stopped). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.meter.removeBatchObservableCallback(this.observe, this.gauges);
  }
}

/** Counters of one handler. Internal to the package. */
export class HandlerMetrics {
  constructor(
    private readonly delivered: Counter,
    private readonly errors: Counter,
    private readonly byType: Readonly<Record<DeliveryType, Attributes>>,
    private readonly handlerAttributes: Attributes,
  ) {}

  deliveredOne(type: DeliveryType): void {
    this.delivered.add(1, this.byType[type]);
  }

  failedOne(): void {
    this.errors.add(1, this.handlerAttributes);
  }
}
