import { randomBytes } from "node:crypto";
import { silentLogger, type Clock, type Logger, type Timer } from "@tessera/core";
import { formatKubeTime, formatMicroTime, type KubeObject, isNotFound } from "@tessera/client";
import type { EventInput, EventRecorder } from "./event-recorder.js";
import type { KubeTransport } from "@tessera/client";

/** Options of a {@link KubeEventRecorder}. */
export interface KubeEventRecorderOptions {
  transport: KubeTransport;
  clock: Clock;
  logger?: Logger;
  /** `reportingController`: the operator, e.g. `example.com/widget-operator`. */
  controller: string;
  /** `reportingInstance`: this replica's identity. */
  instance: string;
  /** Repeats of one event are written as one series update at most this often; default 30 s (client-go's). */
  seriesFlushMs?: number;
  /** An event repeated after this long starts a new Event; default 6 min (client-go's). */
  seriesWindowMs?: number;
  /** Series remembered at most (oldest forgotten first); default 4096. */
  maxSeries?: number;
  /**
   * New Events about one object allowed at once, refilled one per
   * `perObjectRefillMs`: client-go's spam filter (25, one per 5 min). Repeats
   * of an Event already written only count in memory and are not limited.
   */
  perObjectBurst?: number;
  perObjectRefillMs?: number;
}

interface Series {
  /** Which API the Event was written to. */
  api: "events" | "core";
  namespace: string;
  name: string;
  /** Occurrences so far, written or not. */
  count: number;
  /** Occurrences the server has. */
  written: number;
  lastSeen: number;
  lastObserved: Date;
  flush: Timer | undefined;
  /** The create of the first occurrence: series updates wait for it. */
  created: Promise<boolean>;
}

const NOTE_LIMIT = 1024;

/**
 * Writes events.k8s.io/v1 Events. The first occurrence of an event (same
 * object, type, reason, action, note and related object) creates an Event;
 * repeats within `seriesWindowMs` only count, and are written as the Event's
 * `series` (count, lastObservedTime) at most every `seriesFlushMs`, so a hot
 * loop cannot flood the API server. Failures are logged, never thrown.
 */
export class KubeEventRecorder implements EventRecorder {
  private readonly transport: KubeTransport;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly series = new Map<string, Series>();
  private readonly flushMs: number;
  private readonly windowMs: number;
  private readonly maxSeries: number;
  private readonly burst: number;
  private readonly refillMs: number;
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  /** events.k8s.io/v1 when the server serves it, else core/v1; probed once. */
  private api: Promise<"events" | "core"> | undefined;
  /** New Events refused by the per-object limit (for tests and a debug log). */
  dropped = 0;

  constructor(private readonly options: KubeEventRecorderOptions) {
    this.transport = options.transport;
    this.clock = options.clock;
    this.logger = options.logger ?? silentLogger;
    this.flushMs = options.seriesFlushMs ?? 30_000;
    this.windowMs = options.seriesWindowMs ?? 6 * 60_000;
    this.maxSeries = options.maxSeries ?? 4096;
    this.burst = options.perObjectBurst ?? 25;
    this.refillMs = options.perObjectRefillMs ?? 5 * 60_000;
  }

  record(regarding: KubeObject, event: EventInput): void {
    const meta = regarding.metadata ?? {};
    const note = event.note.length > NOTE_LIMIT ? `${event.note.slice(0, NOTE_LIMIT - 3)}...` : event.note;
    const key = JSON.stringify([
      regarding.apiVersion,
      regarding.kind,
      meta.namespace,
      meta.name,
      meta.uid,
      event.type,
      event.reason,
      event.action,
      note,
      event.related?.metadata?.uid,
    ]);
    const now = this.clock.now();
    const existing = this.series.get(key);
    if (existing && now - existing.lastSeen <= this.windowMs) {
      existing.count++;
      existing.lastSeen = now;
      existing.lastObserved = this.clock.wallTime();
      existing.flush ??= this.clock.setTimer(this.flushMs, () => void this.flush(key, existing));
      return;
    }
    if (existing) this.forget(key, existing);
    if (!this.take(meta.uid ?? `${meta.namespace}/${meta.name}`, now)) {
      this.dropped++;
      this.logger.debug("event dropped: too many about one object", {
        regarding: reference(regarding),
        reason: event.reason,
      });
      return;
    }
    const namespace = meta.namespace || "default";
    const name = `${meta.name ?? "object"}.${randomBytes(8).toString("hex")}`;
    const observed = this.clock.wallTime();
    const api = (this.api ??= this.probe());
    let chosen: "events" | "core" = "events";
    const created = api
      .then((which) => {
        chosen = which;
        const body =
          which === "events"
            ? eventsBody(name, namespace, observed, regarding, event, note, this.options)
            : coreBody(name, namespace, observed, regarding, event, note, this.options);
        return this.transport.call(
          {
            verb: "create",
            resource: which === "events" ? "events.events.k8s.io" : "events",
            namespace,
            name,
          },
          { method: "POST", path: eventsPath(which, namespace), body },
        );
      })
      .then(
        () => true,
        (error: unknown) => {
          this.logger.warn("could not record an event", {
            regarding: reference(regarding),
            reason: event.reason,
            error,
          });
          return false;
        },
      );
    void created.then(() => {
      const s = this.series.get(key);
      if (s) s.api = chosen;
    });
    this.series.set(key, {
      api: "events",
      namespace,
      name,
      count: 1,
      written: 1,
      lastSeen: now,
      lastObserved: this.clock.wallTime(),
      flush: undefined,
      created,
    });
    if (this.series.size > this.maxSeries) {
      const [oldestKey, oldest] = this.series.entries().next().value as [string, Series];
      this.forget(oldestKey, oldest);
    }
  }

  /** One token of `object`'s bucket, if it has one left. */
  private take(object: string, now: number): boolean {
    let bucket = this.buckets.get(object);
    if (!bucket) {
      bucket = { tokens: this.burst, at: now };
      this.buckets.set(object, bucket);
      if (this.buckets.size > this.maxSeries) this.buckets.delete(this.buckets.keys().next().value as string);
    }
    const refill = Math.floor((now - bucket.at) / this.refillMs);
    if (refill > 0) {
      bucket.tokens = Math.min(this.burst, bucket.tokens + refill);
      bucket.at += refill * this.refillMs;
    }
    if (bucket.tokens <= 0) return false;
    bucket.tokens--;
    return true;
  }

  /** Whether the server serves events.k8s.io/v1; core/v1 Events where it does not. */
  private async probe(): Promise<"events" | "core"> {
    try {
      await this.transport.call(
        { verb: "discover", resource: "events.k8s.io/v1" },
        { method: "GET", path: "/apis/events.k8s.io/v1" },
      );
      return "events";
    } catch (error) {
      if (isNotFound(error)) {
        this.logger.info("events.k8s.io/v1 is not served; recording core/v1 Events");
        return "core";
      }
      this.api = undefined; // ask again next time
      return "events";
    }
  }

  /** Cancels pending series writes (they are dropped). */
  close(): void {
    for (const [key, s] of this.series) this.forget(key, s);
  }

  /**
   * Writes every series count not yet written (at once, not at its timer),
   * then forgets them all, so a stopping manager leaves no timer behind and
   * loses no count. Failures are logged as usual.
   */
  async flushAll(): Promise<void> {
    const pending = [...this.series].filter(([, s]) => s.flush !== undefined);
    for (const [, s] of pending) s.flush?.cancel();
    await Promise.all(pending.map(([key, s]) => this.flush(key, s)));
    this.close();
  }

  private forget(key: string, s: Series): void {
    s.flush?.cancel();
    this.series.delete(key);
  }

  private async flush(key: string, s: Series): Promise<void> {
    s.flush = undefined;
    if (!(await s.created) || s.count === s.written) return;
    const count = s.count;
    try {
      await this.transport.call(
        {
          verb: "patch",
          resource: s.api === "events" ? "events.events.k8s.io" : "events",
          namespace: s.namespace,
          name: s.name,
        },
        {
          method: "PATCH",
          path: `${eventsPath(s.api, s.namespace)}/${encodeURIComponent(s.name)}`,
          body:
            s.api === "events"
              ? { series: { count, lastObservedTime: formatMicroTime(s.lastObserved) } }
              : { count, lastTimestamp: formatKubeTime(s.lastObserved) },
          contentType: "application/merge-patch+json",
        },
      );
      s.written = count;
    } catch (error) {
      this.logger.warn("could not update an event series", {
        namespace: s.namespace,
        name: s.name,
        count,
        error,
      });
      if (this.series.get(key) === s) this.forget(key, s);
    }
  }
}

function reference(object: KubeObject): Record<string, string> {
  const meta = object.metadata ?? {};
  const ref: Record<string, string> = {};
  if (object.apiVersion) ref["apiVersion"] = object.apiVersion;
  if (object.kind) ref["kind"] = object.kind;
  if (meta.namespace) ref["namespace"] = meta.namespace;
  if (meta.name) ref["name"] = meta.name;
  if (meta.uid) ref["uid"] = meta.uid;
  if (meta.resourceVersion) ref["resourceVersion"] = meta.resourceVersion;
  return ref;
}

function eventsPath(api: "events" | "core", namespace: string): string {
  const ns = encodeURIComponent(namespace);
  return api === "events"
    ? `/apis/events.k8s.io/v1/namespaces/${ns}/events`
    : `/api/v1/namespaces/${ns}/events`;
}

type RecorderIdentity = Pick<KubeEventRecorderOptions, "controller" | "instance">;

function eventsBody(
  name: string,
  namespace: string,
  at: Date,
  regarding: KubeObject,
  event: EventInput,
  note: string,
  who: RecorderIdentity,
) {
  return {
    apiVersion: "events.k8s.io/v1",
    kind: "Event",
    metadata: { name, namespace },
    eventTime: formatMicroTime(at),
    reportingController: who.controller,
    reportingInstance: who.instance,
    type: event.type,
    reason: event.reason,
    action: event.action,
    note,
    regarding: reference(regarding),
    ...(event.related ? { related: reference(event.related) } : {}),
  };
}

/** The same Event in core/v1's shape, for servers without events.k8s.io/v1. */
function coreBody(
  name: string,
  namespace: string,
  at: Date,
  regarding: KubeObject,
  event: EventInput,
  note: string,
  who: RecorderIdentity,
) {
  return {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name, namespace },
    involvedObject: reference(regarding),
    ...(event.related ? { related: reference(event.related) } : {}),
    type: event.type,
    reason: event.reason,
    action: event.action,
    message: note,
    source: { component: who.controller },
    reportingComponent: who.controller,
    reportingInstance: who.instance,
    firstTimestamp: formatKubeTime(at),
    lastTimestamp: formatKubeTime(at),
    count: 1,
  };
}
