import type { Logger } from "@tessera/core";
import { DeletedFinalStateUnknown, metaNamespaceKey } from "@tessera/reflector";
import { type KubeObject } from "@tessera/client";
import type { HandlerRegistration } from "./handler-registration.js";
import type { HandlerMetrics } from "./informer-metrics.js";
import type { Notification, ResourceEventHandler } from "./resource-event-handler.js";
import { SyncWaiters } from "./sync-waiters.js";
import { UnboundedQueue } from "./unbounded-queue.js";

/** Synchronous callbacks run back to back at most this many times before the loop yields to other work. */
const SYNC_RUN_BEFORE_YIELD = 256;

/** What a {@link HandlerDelivery} needs from its informer. */
export interface HandlerDeliveryContext {
  /** The informer's name, for logs. */
  informer: string;
  /** The resource, for logs. */
  resource: string;
  /** Whether the informer's cache has synced. */
  informerSynced(): boolean;
  /** Called once when the registration is closed. */
  onClose(delivery: HandlerDelivery<never>): void;
  logger: Logger;
  metrics: HandlerMetrics;
}

/**
 * The delivery of notifications to one handler: an unbounded buffer of its
 * own, drained in order by its own loop, so a slow handler only ever delays
 * itself. The informer appends without waiting; the loop calls the handler,
 * awaits it when it returns a promise, and takes the next. Internal to the
 * package; users see it as a {@link HandlerRegistration}.
 */
export class HandlerDelivery<T extends KubeObject> implements HandlerRegistration {
  private readonly buffer = new UnboundedQueue<Notification<T>>();
  private draining = false;
  private running = false;
  private closed = false;
  /** Initial-list adds appended and not yet finished. */
  private initialPending = 0;
  private readonly syncWaiters = new SyncWaiters();
  private idleWaiters: (() => void)[] = [];

  constructor(
    readonly name: string,
    private readonly handler: ResourceEventHandler<T>,
    private readonly context: HandlerDeliveryContext,
  ) {}

  get pending(): number {
    return this.buffer.length + (this.running ? 1 : 0);
  }

  /** Whether {@link HandlerDelivery.close} was called. */
  get isClosed(): boolean {
    return this.closed;
  }

  hasSynced(): boolean {
    return !this.closed && this.initialPending === 0 && this.context.informerSynced();
  }

  waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (this.hasSynced()) return Promise.resolve(true);
    if (this.closed) return Promise.resolve(false);
    return this.syncWaiters.wait(signal);
  }

  whenIdle(): Promise<void> {
    if (this.pending === 0 || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.buffer.clear();
    this.initialPending = 0;
    this.syncWaiters.settle(false);
    this.wakeIdle();
    this.context.onClose(this as unknown as HandlerDelivery<never>);
  }

  /** Appends a notification; never waits, never drops. */
  push(notification: Notification<T>): void {
    if (this.closed) return;
    this.buffer.push(notification);
    if (notification.type === "add" && notification.isInInitialList) this.initialPending++;
    if (!this.draining) {
      this.draining = true;
      queueMicrotask(() => void this.drain());
    }
  }

  /** Re-checks the sync condition (the informer calls it when its cache syncs). */
  checkSynced(): void {
    if (this.hasSynced()) this.syncWaiters.settle(true);
  }

  /**
   * The informer stopped. Without a synced cache the handler never syncs, so
   * pending waits answer `false`; with one, the handler may still finish its
   * initial list (its loop outlives the informer's).
   */
  informerStopped(): void {
    if (!this.context.informerSynced()) this.syncWaiters.settle(false);
  }

  private async drain(): Promise<void> {
    let syncRun = 0;
    try {
      for (let next = this.buffer.shift(); next !== undefined && !this.closed; next = this.buffer.shift()) {
        this.running = true;
        let result: void | Promise<void> = undefined;
        try {
          result = this.call(next);
          if (result !== undefined) {
            syncRun = 0;
            await result;
          }
        } catch (err) {
          this.failed(next, err);
        }
        this.running = false;
        this.finished(next);
        if (result === undefined && ++syncRun >= SYNC_RUN_BEFORE_YIELD) {
          syncRun = 0;
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
      }
    } finally {
      this.running = false;
      this.draining = false;
      this.wakeIdle();
    }
  }

  private call(n: Notification<T>): void | Promise<void> {
    switch (n.type) {
      case "add":
        return this.handler.onAdd?.(n.object, n.isInInitialList);
      case "update":
        return this.handler.onUpdate?.(n.oldObject, n.newObject);
      case "delete":
        return this.handler.onDelete?.(n.object);
    }
  }

  private finished(n: Notification<T>): void {
    if (this.closed) return;
    this.context.metrics.deliveredOne(n.type === "update" && n.resync ? "resync" : n.type);
    if (n.type === "add" && n.isInInitialList) {
      this.initialPending--;
      if (this.initialPending === 0) this.checkSynced();
    }
  }

  private failed(n: Notification<T>, err: unknown): void {
    this.context.metrics.failedOne();
    this.context.logger.error("event handler failed", {
      informer: this.context.informer,
      resource: this.context.resource,
      handler: this.name,
      notification: n.type,
      key: keyOf(n),
      error: err instanceof Error ? err.message : String(err),
    });
  }

  private wakeIdle(): void {
    if (this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}

function keyOf<T extends KubeObject>(n: Notification<T>): string {
  const obj = n.type === "update" ? n.newObject : n.object;
  if (obj instanceof DeletedFinalStateUnknown) return obj.key;
  try {
    return metaNamespaceKey(obj);
  } catch {
    return "<unnamed>";
  }
}
