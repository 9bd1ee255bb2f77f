import { setTimeout as delay } from "node:timers/promises";
import { LOW_PRIORITY, TerminalError, WorkQueue, WorkerPool } from "@tessera/workqueue";

interface Widget {
  replicas: number;
}

/** Stands in for an informer's cache. */
const cache = new Map<string, Widget>([["default/small", { replicas: 2 }]]);

/** Writes what the widget asks for (a client call in a real operator); throws to be retried. */
async function apply(key: string, widget: Widget, signal: AbortSignal): Promise<void> {
  await delay(10, undefined, { signal });
  console.log(`${key}: scaled to ${widget.replicas}`);
}

const queue = new WorkQueue<string>({ name: "widgets" }); // + clock, logger, meter, rateLimiter

// From the informer's event handlers:
queue.add("default/small"); // a live event
queue.add("default/other", { priority: LOW_PRIORITY }); // from the initial list or a resync

const pool = new WorkerPool({
  queue,
  concurrency: 4,
  timeoutMs: 60_000, // per item: its signal aborts, and it is retried
  handler: async (key, { signal }) => {
    const widget = cache.get(key);
    if (widget === undefined) return; // gone: nothing to do
    // Retrying cannot fix a bad spec: logged, counted, not requeued until the next event.
    if (widget.replicas < 0) throw new TerminalError(`${key}: spec.replicas is negative`);
    await apply(key, widget, signal); // a throw is retried with backoff: 5 ms, 10 ms, ... up to 1000 s
    return { requeueAfterMs: 5 * 60_000 }; // look again in five minutes
  },
});

// Runs until SIGTERM; then takes no more items, closes the queue and waits
// up to drainTimeoutMs (30 s) for the items in flight.
const stop = new AbortController();
process.once("SIGTERM", () => stop.abort());
const { drained, abandoned } = await pool.run(stop.signal);
if (!drained) console.warn("still running at the drain timeout:", abandoned);
