import { strict as assert } from "node:assert";
import { FakeClock } from "@tessera/core/testing";
import { WorkQueue, WorkerPool } from "@tessera/workqueue";

// A test drives the queue's delays and the pool's timeouts with a fake clock:
// no real time passes.
const clock = new FakeClock();
const queue = new WorkQueue<string>({ name: "widgets", clock });
const seenAt: number[] = [];
const pool = new WorkerPool({
  queue,
  clock,
  handler: () => {
    seenAt.push(clock.now());
    return { requeueAfterMs: 60_000 };
  },
});
const stop = new AbortController();
const running = pool.run(stop.signal);

queue.add("default/a");
await clock.advance(120_000);
assert.deepEqual(seenAt, [0, 60_000, 120_000]);

stop.abort();
assert.deepEqual(await running, { drained: true, abandoned: [] });
