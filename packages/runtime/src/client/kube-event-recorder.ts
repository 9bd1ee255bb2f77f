import { randomBytes } from "node:crypto";
import { silentLogger, type Clock, type Logger, type Timer } from "@tessera/core";
import type { KubeObject } from "@tessera/reflector";
import type { EventInput, EventRecorder } from "./event-recorder.js";
import type { KubeTransport } from "./kube-transport.js";

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
}

interface Series {
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

  constructor(private readonly options: KubeEventRecorderOptions) {
    this.transport = options.transport;
    this.clock = options.clock;
    this.logger = options.logger ?? silentLogger;
    this.flushMs = options.seriesFlushMs ?? 30_000;
    this.windowMs = options.seriesWindowMs ?? 6 * 60_000;
    this.maxSeries = options.maxSeries ?? 4096;
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
    const namespace = meta.namespace || "default";
    const name = `${meta.name ?? "object"}.${randomBytes(8).toString("hex")}`;
    const body = {
      apiVersion: "events.k8s.io/v1",
      kind: "Event",
      metadata: { name, namespace },
      eventTime: microTime(this.clock.wallTime()),
      reportingController: this.options.controller,
      reportingInstance: this.options.instance,
      type: event.type,
      reason: event.reason,
      action: event.action,
      note,
      regarding: reference(regarding),
      ...(event.related ? { related: reference(event.related) } : {}),
    };
    const created = this.transport
      .call(
        { verb: "create", resource: "events.events.k8s.io", namespace, name },
        {
          method: "POST",
          path: `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/events`,
          body,
        },
      )
      .then(
        () => true,
        (error: unknown) => {
          this.logger.warn("could not record an event", { event: body, error });
          return false;
        },
      );
    this.series.set(key, {
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

  /** Cancels pending series writes (they are dropped). */
  close(): void {
    for (const [key, s] of this.series) this.forget(key, s);
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
        { verb: "patch", resource: "events.events.k8s.io", namespace: s.namespace, name: s.name },
        {
          method: "PATCH",
          path: `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(s.namespace)}/events/${encodeURIComponent(s.name)}`,
          body: { series: { count, lastObservedTime: microTime(s.lastObserved) } },
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

/** MicroTime: RFC 3339 with exactly six fractional digits, as the API server requires. */
function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}
