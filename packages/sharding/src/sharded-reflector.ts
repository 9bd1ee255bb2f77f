import type { Tracer } from "@opentelemetry/api";
import {
  Backoff,
  resolveInstrumentation,
  sleep,
  toError,
  type Instrumentation,
  type LogFields,
  type ResolvedInstrumentation,
  type Runnable,
  type Syncable,
} from "@tessera/core";
import {
  metaNamespaceKey,
  Reflector,
  type ListerWatcher,
  type ReflectorHealth,
  type ReflectorOptions,
  type ReflectorStore,
  type SyncMode,
} from "@tessera/reflector";
import { type KubeObject } from "@tessera/client";
import { formatHashBound } from "./hash-bound.js";
import { isValidHashRange, mergeRanges, rangesSize, type HashRange } from "./hash-range.js";
import { diffRanges } from "./range-diff.js";
import { RangeListerWatcher } from "./range-lister-watcher.js";
import { RangeScopedStore } from "./range-scoped-store.js";
import { probeServerFiltering } from "./server-filtering-probe.js";
import { DEFAULT_SHARD_FIELD, type ShardField } from "./shard-field.js";
import { ShardLedger } from "./shard-ledger.js";
import { ShardSelector } from "./shard-selector.js";
import { ShardSelectorError } from "./shard-selector-error.js";
import { ShardedReflectorMetrics } from "./sharding-metrics.js";
import type { SlotSpace } from "./slot-space.js";

/** How long the probe waits before asking again when the collection was empty. */
const NO_OBJECTS_REPROBE_MS = 10_000;
/**
 * Reflector settings passed to every range reflector unchanged (see
 * {@link ReflectorOptions}); the instrumentation comes from the sharded
 * reflector's own options.
 */
export type RangeReflectorOptions<T extends KubeObject> = Omit<
  ReflectorOptions<T>,
  "listerWatcher" | "store" | "name" | "resumeFrom" | keyof Instrumentation
>;

/**
 * Options of a {@link ShardedReflector}. Its instrumentation is handed to every
 * range reflector too; the meter defaults to the global `@tessera/sharding`
 * one, and the range reflectors trace under `@tessera/reflector` unless a
 * tracer is given.
 */
export interface ShardedReflectorOptions<T extends KubeObject> extends Instrumentation {
  /** The whole, unsharded collection; each range reflector wraps it with its range. */
  listerWatcher: ListerWatcher<T>;
  /**
   * Where the union of the ranges goes (a DeltaFIFO, an IndexedStore, an
   * informer's store). Only add, update and delete are called on it, never
   * replace: a relist of one range must not wipe the others.
   */
  store: ReflectorStore<T>;
  /** The shard key; default `object.metadata.uid`. */
  field?: ShardField;
  /** Names the sharded reflector in logs; range reflectors are named after it and their range. */
  name?: string;
  /** The ring, for metric attributes and logs. */
  ring?: string;
  /** This member's identity, for metric attributes and logs. */
  member?: string;
  /** Passed to every range reflector (its `keyFunc` also keys the store here). */
  reflector?: RangeReflectorOptions<T>;
  /** LIST once on `run` to learn whether the server filters by shardSelector; default true. */
  probe?: boolean;
  /**
   * How one range is listed and watched; default: the range as
   * `shardSelector` (a `RangeListerWatcher`). Owned kinds select
   * their owner's slots by label instead (`OwnerSlotListerWatcher`).
   */
  scope?: (range: HashRange, inner: ListerWatcher<T>) => RangeScope<T>;
}

/** One range's lister-watcher, which also tells whether an object belongs to the range (to split a range without a relist). */
export interface RangeScope<T extends KubeObject> extends ListerWatcher<T> {
  matchesObject(object: T): boolean;
  /** The range's selector as sent, for logs and {@link RangeState}. */
  toString(): string;
}

/** What {@link ShardedReflector.rangeStates} reports for one range reflector. */
export interface RangeState {
  readonly range: HashRange;
  /** The selector sent as `shardSelector`. */
  readonly selector: string;
  readonly synced: boolean;
  /** How the range was last synced; `"resumed"` for a piece of a split range that never relisted. */
  readonly mode: SyncMode | undefined;
  /** Keys of this range in the store. */
  readonly objects: number;
  readonly resourceVersion: string;
}

/** Raised by {@link ShardedReflector.run} when it runs already or ran before. */
export class ShardedReflectorStateError extends Error {
  override name = "ShardedReflectorStateError";
}

interface RangeWatch<T extends KubeObject> {
  readonly range: HashRange;
  readonly selector: { matchesObject(object: T): boolean; toString(): string };
  readonly store: RangeScopedStore<T>;
  readonly reflector: Reflector<T>;
  readonly stop: AbortController;
  done: Promise<void> | undefined;
}

/**
 * A member's view of a sharded collection: one {@link Reflector} per owned
 * hash range, all writing into ONE store.
 *
 * - Gaining a range starts one reflector that lists (or watch-lists) only
 *   that range; losing a range stops its reflector and evicts its objects
 *   (plain deletes, with their last known state); ranges kept are never
 *   touched, so a rebalance never relists them.
 * - A range partly lost (the planner gives away the tail of a run) is split:
 *   its reflector stops, and a reflector per kept piece resumes watching
 *   from the old one's resourceVersion with the objects it already has, so
 *   nothing is listed again; the objects of the lost piece are evicted.
 * - Each range reflector sends its range as `shardSelector` and re-checks
 *   every list item and event client-side, so a server that does not filter
 *   still gives exactly the range, at the cost of receiving everything.
 * - On `run`, a LIST probe (`limit=1`) learns whether the server filters;
 *   logged once, exposed as {@link ShardedReflector.serverFiltering} and the
 *   `tessera_sharding_server_filtering` gauge.
 *
 * Structurally an informer source (`@tessera/informers`' `InformerSource`):
 *
 * ```ts
 * let sharded!: ShardedReflector<V1ConfigMap>;
 * const informer = new SharedIndexInformer<V1ConfigMap>({
 *   listerWatcher: lw,
 *   source: (store) => (sharded = new ShardedReflector({ listerWatcher: lw, store, ring, member: identity })),
 * });
 * const member = new ShardMember({ ...common, onAssignment: ({ active }) => sharded.setSlots(active, space) });
 * ```
 */
export class ShardedReflector<T extends KubeObject = KubeObject> implements Runnable, Syncable {
  readonly name: string;
  readonly resource: string;
  readonly field: ShardField;
  private readonly lw: ListerWatcher<T>;
  private readonly ledger: ShardLedger<T>;
  private readonly reflectorOptions: RangeReflectorOptions<T>;
  private readonly tools: ResolvedInstrumentation;
  /** The tracer given in the options, handed to the range reflectors. */
  private readonly givenTracer: Tracer | undefined;
  private readonly metricAttributes: { resource: string; ring?: string; member?: string };
  /** Registered while running: the gauges are observed from `run` to its end. */
  private metrics: ShardedReflectorMetrics | undefined;
  private readonly logFields: LogFields;
  private readonly probeEnabled: boolean;
  private readonly scope: ((range: HashRange, inner: ListerWatcher<T>) => RangeScope<T>) | undefined;

  private watches: RangeWatch<T>[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private configured = false;
  private applying: Promise<void> = Promise.resolve();
  private state: "new" | "running" | "stopped" = "new";
  private runSignal: AbortSignal | undefined;
  private fatalAbort: AbortController | undefined;
  private fatal: unknown;
  private lastErr: unknown;
  private filtering: boolean | undefined;
  private syncWaiters: ((synced: boolean) => void)[] = [];

  constructor(options: ShardedReflectorOptions<T>) {
    this.lw = options.listerWatcher;
    this.resource = this.lw.resource;
    this.field = options.field ?? DEFAULT_SHARD_FIELD;
    const where = this.lw.namespace ? ` in ${this.lw.namespace}` : "";
    this.name = options.name ?? `${this.lw.resource}${where}`;
    this.reflectorOptions = options.reflector ?? {};
    this.tools = resolveInstrumentation(options, "@tessera/sharding");
    this.givenTracer = options.tracer;
    this.probeEnabled = options.probe ?? true;
    this.scope = options.scope;
    const keyFunc = this.reflectorOptions.keyFunc ?? ((obj: T) => metaNamespaceKey(obj));
    this.ledger = new ShardLedger(options.store, keyFunc);
    this.logFields = Object.freeze({
      reflector: this.name,
      resource: this.resource,
      ...(this.lw.namespace ? { namespace: this.lw.namespace } : {}),
      ...(options.ring !== undefined ? { ring: options.ring } : {}),
      ...(options.member !== undefined ? { member: options.member } : {}),
    });
    this.metricAttributes = {
      resource: this.resource,
      ...(options.ring !== undefined ? { ring: options.ring } : {}),
      ...(options.member !== undefined ? { member: options.member } : {}),
    };
  }

  /**
   * Whether the server filters this resource by `shardSelector`, as the LIST
   * probe found; `undefined` until it answered (or with `probe: false`).
   */
  get serverFiltering(): boolean | undefined {
    return this.filtering;
  }

  /** The ranges watched now, in order (a split range counts as its pieces). */
  get ranges(): HashRange[] {
    return this.watches.map((w) => w.range).sort((a, b) => (a.start < b.start ? -1 : 1));
  }

  /** Range reflectors (watches) there are now. */
  get rangeCount(): number {
    return this.watches.length;
  }

  /** Objects in the store, over all ranges. */
  get objectCount(): number {
    return this.ledger.size;
  }

  /** One line per range reflector, in range order. */
  rangeStates(): RangeState[] {
    return [...this.watches]
      .sort((a, b) => (a.range.start < b.range.start ? -1 : 1))
      .map((w) => ({
        range: w.range,
        selector: w.selector.toString(),
        synced: w.reflector.hasSynced(),
        mode: w.reflector.lastSyncMode,
        objects: w.store.claims,
        resourceVersion: w.reflector.lastSyncResourceVersion,
      }));
  }

  /**
   * True once ranges were set at least once and every range's reflector
   * holds a complete snapshot of it. Turns false while a newly gained range
   * lists, and true again once it synced. With no ranges, true.
   */
  hasSynced(): boolean {
    return this.configured && this.watches.every((w) => w.reflector.hasSynced());
  }

  /**
   * Resolves true once {@link ShardedReflector.hasSynced} is, false if
   * `signal` aborts or the run ends first (or has ended). Never rejects. A
   * wait begun before {@link ShardedReflector.run} waits for the run.
   */
  waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (this.hasSynced()) return Promise.resolve(true);
    if (signal?.aborted || this.state === "stopped") return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const onAbort = () => resolve(false);
      signal?.addEventListener("abort", onAbort, { once: true });
      this.syncWaiters.push((synced) => {
        signal?.removeEventListener("abort", onAbort);
        resolve(synced);
      });
    });
  }

  /**
   * The resourceVersion last delivered by any range. Ranges are separate
   * watches, so no single resourceVersion describes the whole store; this
   * one is for logs and for an informer's `lastSyncResourceVersion`.
   */
  get lastSyncResourceVersion(): string {
    return this.ledger.lastResourceVersion;
  }

  /** The last failure of any range's list or watch, `undefined` if none yet. */
  get lastError(): unknown {
    return this.lastErr;
  }

  /** Unhealthy when any range's reflector is (see `Reflector.health`). */
  health(): ReflectorHealth {
    for (const w of this.watches) {
      const health = w.reflector.health();
      if (!health.healthy) return health;
    }
    return { healthy: true };
  }

  /** {@link ShardedReflector.setRanges} for the ranges `slots` make in `space` (e.g. a `SlotChange`'s `active`). */
  setSlots(slots: Iterable<number>, space: SlotSpace): Promise<void> {
    return this.setRanges(space.rangesOf(slots));
  }

  /**
   * Watches exactly `ranges` from now on (any ranges: their union counts).
   * Lost ranges are stopped and their objects evicted (deletes to the store)
   * before this resolves, so a `ShardMember` may acknowledge the epoch once
   * it did; gained ranges have started (or start with `run`) but may still
   * be listing: see {@link ShardedReflector.waitForSync}. Calls are applied
   * in order.
   *
   * @throws ShardSelectorError for a range outside [0, 2^64) or empty
   */
  setRanges(ranges: readonly HashRange[]): Promise<void> {
    for (const r of ranges) {
      if (!isValidHashRange(r)) {
        throw new ShardSelectorError(
          `range [${r.start}, ${r.end}) is not 0 <= start < end <= 2^64`,
          `${this.field}: ${ranges.map((x) => `[${x.start}, ${x.end})`).join(", ")}`,
        );
      }
    }
    const target = mergeRanges(ranges);
    const next = this.applying.then(() => this.apply(target));
    this.applying = next.catch(() => undefined);
    return next;
  }

  /**
   * Runs every range reflector (those of later {@link ShardedReflector.setRanges}
   * calls too) and the probe until `signal` aborts; resolves once all
   * stopped. Rejects when a range reflector does (its consistency check
   * failed), after stopping the others. The metrics are reported while it
   * runs and unregistered at its end. A sharded reflector runs once: a
   * second run rejects with {@link ShardedReflectorStateError}.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.state !== "new") {
      throw new ShardedReflectorStateError(
        `sharded reflector ${this.name} ${this.state === "running" ? "is running" : "has stopped"}`,
      );
    }
    this.state = "running";
    const fatalAbort = new AbortController();
    this.fatalAbort = fatalAbort;
    const stop = AbortSignal.any([signal, fatalAbort.signal]);
    this.runSignal = stop;
    const metrics = new ShardedReflectorMetrics(this.tools.meter, this.metricAttributes, () => ({
      objects: this.ledger.size,
      ranges: this.watches.length,
      serverFiltering: this.filtering,
    }));
    this.metrics = metrics;
    this.tools.logger.info("sharded reflector starting", { ...this.logFields, ranges: this.describe() });
    const probing = this.probeEnabled ? this.probeLoop(stop) : Promise.resolve();
    for (const w of this.watches) this.launch(w);
    try {
      await new Promise<void>((resolve) => {
        if (stop.aborted) resolve();
        else stop.addEventListener("abort", () => resolve(), { once: true });
      });
      await this.applying;
      await probing;
      while (this.inFlight.size > 0) await Promise.allSettled(Array.from(this.inFlight));
    } finally {
      this.state = "stopped";
      this.runSignal = undefined;
      this.fatalAbort = undefined;
      metrics.close();
      this.metrics = undefined;
      this.releaseSyncWaiters(this.hasSynced());
      this.tools.logger.info("sharded reflector stopped", { ...this.logFields, objects: this.ledger.size });
    }
    if (this.fatal !== undefined) throw toError(this.fatal);
  }

  private async apply(target: HashRange[]): Promise<void> {
    this.configured = true;
    const current = this.watches;
    const diff = diffRanges(
      current.map((w) => w.range),
      target,
    );
    const retired: RangeWatch<T>[] = [];
    const next: RangeWatch<T>[] = diff.kept.map((i) => current[i]!);
    let evicted = this.ledger.size;
    for (const i of diff.stopped) {
      const w = current[i]!;
      this.retire(w);
      this.ledger.release(w.store, () => undefined);
      retired.push(w);
    }
    const resumed: RangeWatch<T>[] = [];
    for (const { index, parts } of diff.split) {
      const w = current[index]!;
      // Stop the old reflector and read where it got to in the same turn: everything it wrote is in
      // the store, nothing it might still deliver will be, and its successors resume from there.
      this.retire(w);
      const rv = w.reflector.hasSynced() ? w.reflector.lastSyncResourceVersion : "";
      const pieces = parts.map((range) => this.createWatch(range, rv));
      this.ledger.release(w.store, (obj) => pieces.find((p) => p.selector.matchesObject(obj))?.store);
      retired.push(w);
      resumed.push(...pieces);
    }
    evicted -= this.ledger.size;
    const started = diff.started.map((range) => this.createWatch(range, ""));
    this.watches = [...next, ...resumed, ...started];
    for (const w of [...resumed, ...started]) this.launch(w);
    if (retired.length > 0 || started.length > 0) {
      this.tools.logger.info("shard ranges changed", {
        ...this.logFields,
        ranges: this.describe(),
        kept: diff.kept.length,
        stopped: diff.stopped.length,
        split: diff.split.length,
        resumed: resumed.length,
        started: started.length,
        evicted,
        share: Number((rangesSize(target) * 10_000n) / (1n << 64n)) / 100,
      });
    }
    this.checkSynced();
    await Promise.allSettled(retired.map((w) => w.done ?? Promise.resolve()));
  }

  private createWatch(range: HashRange, resumeFrom: string): RangeWatch<T> {
    const store = new RangeScopedStore<T>(this.ledger, () => queueMicrotask(() => this.checkSynced()));
    let selector: RangeWatch<T>["selector"];
    let lw: ListerWatcher<T>;
    if (this.scope) {
      lw = selector = this.scope(range, this.lw);
    } else {
      const shard = ShardSelector.of(this.field, [range]);
      selector = shard;
      lw = new RangeListerWatcher<T>(this.lw, shard, (n) => this.metrics?.clientFiltered(n));
    }
    const userOnError = this.reflectorOptions.onError;
    const reflector = new Reflector<T>({
      ...this.reflectorOptions,
      listerWatcher: lw,
      store,
      name: `${this.name} [${formatHashBound(range.start)}, ${formatHashBound(range.end)})`,
      clock: this.tools.clock,
      random: this.tools.random,
      logger: this.tools.logger,
      meter: this.tools.meter,
      // Unless one is given, the reflector traces under its own package's name.
      ...(this.givenTracer ? { tracer: this.givenTracer } : {}),
      ...(resumeFrom !== "" ? { resumeFrom } : {}),
      onError: (err) => {
        this.lastErr = err;
        userOnError?.(err);
      },
    });
    return { range, selector, store, reflector, stop: new AbortController(), done: undefined };
  }

  private launch(w: RangeWatch<T>): void {
    const runSignal = this.runSignal;
    if (runSignal === undefined || w.done !== undefined || w.stop.signal.aborted) return;
    const done = w.reflector.run(AbortSignal.any([runSignal, w.stop.signal])).catch((err: unknown) => {
      // Only a failed consistency check ends a reflector: a bug worth stopping for.
      this.tools.logger.error("range reflector failed; stopping", {
        ...this.logFields,
        range: w.selector.toString(),
        error: err instanceof Error ? err.message : String(err),
      });
      if (this.fatal === undefined) this.fatal = err;
      this.fatalAbort?.abort(err);
    });
    w.done = done;
    this.inFlight.add(done);
    void done.finally(() => this.inFlight.delete(done));
  }

  private retire(w: RangeWatch<T>): void {
    w.stop.abort(new Error(`range ${w.selector.toString()} of ${this.name} released`));
    w.store.close();
  }

  private async probeLoop(stop: AbortSignal): Promise<void> {
    const backoff = new Backoff(this.tools.clock, this.tools.random, this.reflectorOptions.backoff);
    let warned = false;
    while (!stop.aborted) {
      try {
        const probe = await probeServerFiltering(this.lw, this.field, stop);
        if (probe.filters === undefined) {
          // An empty collection cannot show filtering; ask again later.
          this.tools.logger.debug("shardSelector probe: no objects to tell by yet", this.logFields);
          await sleep(this.tools.clock, NO_OBJECTS_REPROBE_MS, stop);
          continue;
        }
        this.filtering = probe.filters;
        this.tools.logger.info(
          probe.filters
            ? "the server filters by shardSelector"
            : "the server does not filter by shardSelector (gate off or an older server); filtering client-side only",
          {
            ...this.logFields,
            serverFiltering: probe.filters,
            evidence: probe.evidence,
            sent: probe.sent,
            applied: probe.applied,
          },
        );
        return;
      } catch (err) {
        if (stop.aborted) return;
        // Warned once; the retries after it (every backoff) are debug lines.
        const fields = { ...this.logFields, error: err instanceof Error ? err.message : String(err) };
        if (warned) this.tools.logger.debug("shardSelector probe failed; retrying", fields);
        else this.tools.logger.warn("shardSelector probe failed; retrying", fields);
        warned = true;
        await sleep(this.tools.clock, backoff.next(), stop);
      }
    }
  }

  private checkSynced(): void {
    if (this.syncWaiters.length > 0 && this.hasSynced()) this.releaseSyncWaiters(true);
  }

  private releaseSyncWaiters(synced: boolean): void {
    const waiters = this.syncWaiters;
    this.syncWaiters = [];
    for (const w of waiters) w(synced);
  }

  private describe(): string {
    return this.ranges.map((r) => `[${formatHashBound(r.start)}, ${formatHashBound(r.end)})`).join(" ");
  }
}
