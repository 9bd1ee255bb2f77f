import { toError, type Clock, type Timer } from "@tessera/core";
import type { KubeObject } from "@tessera/client";
import type { ListerWatcher, WatchEventHandler } from "./lister-watcher.js";
import type { WatchOptions } from "./list-options.js";

/** How a {@link WatchSession} ended: `error` is undefined when the server closed the stream cleanly. */
export interface WatchOutcome {
  error: unknown;
  events: number;
  durationMs: number;
}

/**
 * One WATCH request in flight, with an idle deadline: when nothing arrives
 * for `limitMs`, the request is aborted with the deadline's error. Events
 * only record the time they came (no timer is touched per event); the one
 * timer re-arms itself for the time left when it fires early. Internal to the
 * reflector.
 */
export class WatchSession<T extends KubeObject> {
  /** Settles when the request ends; never rejects. */
  readonly finished: Promise<WatchOutcome>;
  private readonly controller = new AbortController();
  private readonly startedAt: number;
  private lastActivity: number;
  private timer: Timer | undefined;
  private limitMs = Number.POSITIVE_INFINITY;
  private deadlineError: () => unknown = () => new Error("watch deadline");
  private events = 0;
  private ended = false;

  constructor(
    lw: ListerWatcher<T>,
    options: WatchOptions,
    onEvent: WatchEventHandler<T>,
    private readonly clock: Clock,
    parent: AbortSignal,
  ) {
    this.startedAt = clock.now();
    this.lastActivity = this.startedAt;
    const signal = AbortSignal.any([parent, this.controller.signal]);
    const handler: WatchEventHandler<T> = (event) => {
      this.events++;
      this.lastActivity = this.clock.now();
      onEvent(event);
    };
    let watching: Promise<void>;
    try {
      watching = lw.watch(options, handler, signal);
    } catch (err) {
      watching = Promise.reject(toError(err));
    }
    this.finished = watching.then(
      () => this.end(undefined),
      (err: unknown) => this.end(err),
    );
  }

  /** Events received so far. */
  get eventCount(): number {
    return this.events;
  }

  /** Aborts the request with `reason` unless it already ended. */
  abort(reason: unknown): void {
    if (!this.ended) this.controller.abort(reason);
  }

  /** From now on, abort with `error()` once nothing has arrived for `limitMs`. */
  setIdleDeadline(limitMs: number, error: () => unknown): void {
    this.limitMs = limitMs;
    this.deadlineError = error;
    this.lastActivity = this.clock.now();
    this.arm(limitMs);
  }

  private arm(ms: number): void {
    this.timer?.cancel();
    if (this.ended || !Number.isFinite(ms)) return;
    this.timer = this.clock.setTimer(ms, () => {
      const idle = this.clock.now() - this.lastActivity;
      if (idle >= this.limitMs) this.abort(this.deadlineError());
      else this.arm(this.limitMs - idle);
    });
  }

  private end(error: unknown): WatchOutcome {
    this.ended = true;
    this.timer?.cancel();
    // A deadline or a caller's abort surfaces as its reason, not as a generic AbortError.
    const reason: unknown = this.controller.signal.aborted ? this.controller.signal.reason : error;
    return { error: reason, events: this.events, durationMs: this.clock.now() - this.startedAt };
  }
}
