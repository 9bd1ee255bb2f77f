import { WorkQueue } from "@tessera/workqueue";
const keys = Array.from({ length: 10000 }, (_, i) => `default/object-${i}`);
async function cycles(keys, ops, workers) {
  const queue = new WorkQueue({ name: "bench" });
  let next = 0; let waits = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= ops) return queue.shutDown();
      queue.add(keys[i % keys.length]);
      if (queue.len() === 0) waits++;
      const item = await queue.get();
      if (item === undefined) return;
      queue.done(item);
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: workers }, worker));
  return [ops / ((performance.now() - start) / 1000), waits];
}
for (const w of [1, 8, 2, 8, 1]) console.log(w, await cycles(keys, 1_000_000, w));
