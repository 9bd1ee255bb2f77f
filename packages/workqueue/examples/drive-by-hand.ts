import { setTimeout as delay } from "node:timers/promises";
import { WorkQueue } from "@tessera/workqueue";

/** Whatever the controller does for one key; throws to be retried. */
async function reconcile(key: string): Promise<void> {
  await delay(10);
  console.log(`reconciled ${key}`);
}

const queue = new WorkQueue<string>({ name: "configmaps" });

/** The client-go loop: get, process, forget or retry, done. */
async function worker(): Promise<void> {
  for (let key = await queue.get(); key !== undefined; key = await queue.get()) {
    try {
      await reconcile(key);
      queue.forget(key); // success: reset its backoff
    } catch {
      queue.addRateLimited(key);
    } finally {
      queue.done(key);
    }
  }
}

const workers = [worker(), worker()];
queue.add("default/settings"); // from the informer's event handlers, while the program runs

// Shutting down: drain() refuses new adds (retries included) and resolves
// once every key handed out is done; get() then answers undefined.
await queue.drain();
await Promise.all(workers);
