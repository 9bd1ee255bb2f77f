import { strict as assert } from "node:assert";
import fc from "fast-check";
import { FakeClock } from "@tessera/core/testing";
import { ExponentialFailureRateLimiter, LOW_PRIORITY, WorkQueue } from "../src/index.js";

// A small reference model of the queue, written from the documented rules
// (not from the implementation), run side by side with the real queue over
// random sequences of operations.

type Op =
  | { kind: "add"; item: string; priority: number }
  | { kind: "addAfter"; item: string; delayMs: number; priority: number }
  | { kind: "addRateLimited"; item: string }
  | { kind: "get" }
  | { kind: "tryGet" }
  | { kind: "done"; item: string }
  | { kind: "forget"; item: string }
  | { kind: "advance"; ms: number }
  | { kind: "close" };

const items = ["a", "b", "c", "d", "e"];
const item = fc.constantFrom(...items);
const priority = fc.constantFrom(0, 0, 0, LOW_PRIORITY, 5);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("add" as const), item, priority }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("addAfter" as const),
      item,
      delayMs: fc.constantFrom(-5, 0, 3, 50, 150, 999, 1_500, 12_000, 30_000),
      priority,
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("addRateLimited" as const), item }) },
  { weight: 4, arbitrary: fc.constant({ kind: "get" as const }) },
  { weight: 3, arbitrary: fc.constant({ kind: "tryGet" as const }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("done" as const), item }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("forget" as const), item }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("advance" as const),
      ms: fc.constantFrom(1, 4, 10, 100, 999, 1_000, 5_000, 30_000),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "close" as const }) },
);

/** The bucket width rule, restated from the documentation. */
function width(delayMs: number): number {
  return delayMs < 100 ? 1 : delayMs < 1_000 ? 10 : delayMs < 10_000 ? 100 : 1_000;
}

class Model {
  now = 0;
  seq = 0;
  closed = false;
  dropped = 0;
  ignoredDone = 0;
  /** Items to hand out (again), with their priority. */
  readonly dirty = new Map<string, number>();
  /** Ready items: highest priority first, then lowest seq. */
  readonly ready = new Map<string, { priority: number; seq: number }>();
  readonly processing = new Set<string>();
  readonly delayed = new Map<string, { fireAt: number; priority: number; seq: number }>();
  /** Ids of get() calls still waiting, in call order. */
  readonly waiters: number[] = [];
  /** What each get() call must resolve to. */
  readonly expected = new Map<number, string | undefined>();
  readonly failures = new Map<string, number>();

  add(item: string, priority: number): void {
    if (this.closed) return void this.dropped++;
    this.delayed.delete(item);
    this.enqueue(item, priority);
  }

  addAfter(item: string, delayMs: number, priority: number): void {
    if (this.closed) return void this.dropped++;
    if (!(delayMs > 0)) return this.add(item, priority);
    if (this.dirty.has(item)) return;
    const fireAt = Math.ceil((this.now + delayMs) / width(delayMs)) * width(delayMs);
    const existing = this.delayed.get(item);
    if (existing && existing.fireAt <= fireAt) {
      existing.priority = Math.max(existing.priority, priority);
      return;
    }
    this.delayed.set(item, {
      fireAt,
      priority: Math.max(existing?.priority ?? priority, priority),
      seq: this.seq++,
    });
  }

  addRateLimited(item: string): void {
    if (this.closed) return void this.dropped++;
    const n = this.failures.get(item) ?? 0;
    this.failures.set(item, n + 1);
    this.addAfter(item, Math.min(5 * 2 ** n, 1_000_000), 0);
  }

  /** Returns the item handed out now, or undefined. */
  take(): string | undefined {
    let best: [string, { priority: number; seq: number }] | undefined;
    for (const entry of this.ready) {
      if (
        !best ||
        entry[1].priority > best[1].priority ||
        (entry[1].priority === best[1].priority && entry[1].seq < best[1].seq)
      )
        best = entry;
    }
    if (!best) return undefined;
    this.ready.delete(best[0]);
    this.handOut(best[0]);
    return best[0];
  }

  get(id: number): void {
    const item = this.take();
    if (item !== undefined) this.expected.set(id, item);
    else if (this.closed) this.expected.set(id, undefined);
    else this.waiters.push(id);
  }

  done(item: string): void {
    if (!this.processing.has(item)) return void this.ignoredDone++;
    this.processing.delete(item);
    const priority = this.dirty.get(item);
    if (priority !== undefined) this.makeReady(item, priority);
  }

  advance(ms: number): void {
    const target = this.now + ms;
    for (;;) {
      let next: number | undefined;
      for (const d of this.delayed.values())
        if (d.fireAt <= target && (next === undefined || d.fireAt < next)) next = d.fireAt;
      if (next === undefined) break;
      this.now = next;
      const due = [...this.delayed].filter(([, d]) => d.fireAt === next).sort((x, y) => x[1].seq - y[1].seq);
      for (const [item, d] of due) {
        this.delayed.delete(item);
        this.enqueue(item, d.priority);
      }
    }
    this.now = target;
  }

  close(): void {
    if (!this.closed) this.delayed.clear();
    this.closed = true;
    for (const id of this.waiters.splice(0)) this.expected.set(id, undefined);
  }

  private enqueue(item: string, priority: number): void {
    const current = this.dirty.get(item);
    if (current !== undefined) {
      if (priority > current) {
        this.dirty.set(item, priority);
        if (this.ready.has(item)) this.ready.set(item, { priority, seq: this.seq++ });
      }
      return;
    }
    this.dirty.set(item, priority);
    if (!this.processing.has(item)) this.makeReady(item, priority);
  }

  private makeReady(item: string, priority: number): void {
    const waiter = this.waiters.shift();
    if (waiter === undefined) {
      this.ready.set(item, { priority, seq: this.seq++ });
      return;
    }
    this.handOut(item);
    this.expected.set(waiter, item);
  }

  private handOut(item: string): void {
    this.dirty.delete(item);
    this.processing.add(item);
  }
}

async function run(ops: Op[]): Promise<void> {
  const clock = new FakeClock();
  const queue = new WorkQueue<string>({
    name: "model",
    clock,
    rateLimiter: new ExponentialFailureRateLimiter({ baseDelayMs: 5, maxDelayMs: 1_000_000 }),
  });
  const model = new Model();
  const resolved = new Map<number, string | undefined>();
  /** Items handed out by the real queue and not yet done: at most one holder each. */
  const holders = new Set<string>();
  const received = (got: string | undefined): void => {
    if (got === undefined) return;
    assert.ok(!holders.has(got), `${got} handed out while already held`);
    holders.add(got);
  };
  let nextId = 0;

  for (const o of ops) {
    switch (o.kind) {
      case "add":
        queue.add(o.item, { priority: o.priority });
        model.add(o.item, o.priority);
        break;
      case "addAfter":
        queue.addAfter(o.item, o.delayMs, { priority: o.priority });
        model.addAfter(o.item, o.delayMs, o.priority);
        break;
      case "addRateLimited":
        queue.addRateLimited(o.item);
        model.addRateLimited(o.item);
        break;
      case "get": {
        const id = nextId++;
        void queue.get().then((got) => {
          resolved.set(id, got);
          received(got);
        });
        model.get(id);
        break;
      }
      case "tryGet": {
        const got = queue.tryGet();
        received(got);
        assert.equal(got, model.take());
        break;
      }
      case "done":
        if (holders.has(o.item) || !model.processing.has(o.item)) {
          holders.delete(o.item);
          queue.done(o.item);
          model.done(o.item);
        }
        break;
      case "forget":
        queue.forget(o.item);
        model.failures.delete(o.item);
        break;
      case "advance":
        clock.advanceSync(o.ms);
        model.advance(o.ms);
        break;
      case "close":
        queue.close();
        model.close();
        break;
    }
    await new Promise<void>((resolve) => setImmediate(resolve));

    const stats = queue.stats();
    assert.equal(stats.ready, model.ready.size, "ready");
    assert.equal(stats.processing, model.processing.size, "processing");
    assert.equal(stats.depth, model.dirty.size, "dirty");
    assert.equal(stats.delayed, model.delayed.size, "delayed");
    assert.equal(stats.droppedAfterClose, model.dropped, "dropped");
    assert.equal(stats.ignoredDone, model.ignoredDone, "ignored done");
    assert.deepEqual(resolved, model.expected, "what each get() resolved to");
    assert.deepEqual([...holders].sort(), [...model.processing].sort(), "holders are the processing items");
    for (const key of model.ready.keys())
      assert.ok(!model.processing.has(key), "a ready item is not processing");
    for (const key of model.delayed.keys())
      assert.ok(!model.dirty.has(key), "a waiting item is not also queued");
  }

  // Liveness: once the workers finish and time passes, every item still owed
  // (queued, re-added during processing, or waiting for its delay) is handed
  // out exactly once more, to a waiting get or to a new caller.
  const owed = [...model.dirty.keys(), ...model.delayed.keys()].sort();
  const resolvedBefore = new Set(resolved.keys());
  for (const key of [...holders]) {
    holders.delete(key);
    queue.done(key);
  }
  clock.advanceSync(2_000_000);
  await new Promise<void>((resolve) => setImmediate(resolve));
  const handed = [...resolved].filter(([id]) => !resolvedBefore.has(id)).map(([, got]) => got);
  for (let key = queue.tryGet(); key !== undefined; key = queue.tryGet()) handed.push(key);
  assert.deepEqual(handed.sort(), owed, "every item added after its last done is handed out again, once");
}

describe("WorkQueue against a reference model", () => {
  it("agrees with the model on random sequences of add, addAfter, get, done, forget and close", async () => {
    await fc.assert(fc.asyncProperty(fc.array(op, { maxLength: 120 }), run), { numRuns: 400 });
  });
});
