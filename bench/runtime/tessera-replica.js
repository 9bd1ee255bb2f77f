// One replica of the throughput benchmark's contender "tessera": a manager
// with one no-op ConfigMap controller. The harness (throughput.js) starts it
// with KUBECONFIG, BENCH_NAMESPACE, BENCH_MODE ("every-replica" | "sharded")
// and BENCH_IDENTITY, and reads its stdout:
//   {"ev":"ready"}                        once its cache has synced
//   {"ev":"r","n":<name>,"t":<µs>,"i":<µs>} the first reconcile of each object
//                                          (µs of the machine's monotonic clock),
//                                          and when its first event reached the
//                                          informer's handlers ("i", optional;
//                                          one replica, every-replica mode only)
//   {"ev":"r",...,"w":<µs>}               with BENCH_ARRIVAL=1, also when the watch stream's bytes
//                                          holding its first event were read from the socket ("w")
//   {"ev":"late","t":<µs>,"ms":<ms>,"cpu":<ms>}  with BENCH_ARRIVAL=1, the event loop's stalls of 50 ms
//                                          or more (a 10 ms timer that fired "ms" late at "t"), and
//                                          the process's CPU in that time
//   {"ev":"gc","t":<µs>,"ms":<ms>}        with BENCH_ARRIVAL=1, V8's GC pauses of 20 ms or more (from "t")
//   {"ev":"count","total":<n>}            reconciles so far, every 500 ms
// BENCH_COMPACT=1 caches the ConfigMaps compact (as JSON text, decoded on
// read); BENCH_READ=1 makes each reconcile read its object from the cache
// (ctx.current()), the read a compact cache pays for. BENCH_WRITE=1 makes the
// first reconcile of each object annotate it through the manager's client and
// read it back from the cache (client.get); BENCH_RYOW_MS sets
// cache.readYourWritesMs, so that read waits for the cache to see the write.
// BENCH_WIRE=json watches in JSON instead of protobuf (the manager's `wire`).
// BENCH_SERVE=1 serves the health probes and metrics (on ports the system
// picks) and logs at info, as an operator ships; otherwise both are off.
// Any other contender (a controller-runtime manager, ...) that speaks these
// lines can be benchmarked by the same harness (see throughput.js --contender).
import { subscribe } from "node:diagnostics_channel";
import { ConfigMaps, Manager, runMain, Tokens } from "@tessera/runtime";

const emit = (line) => process.stdout.write(JSON.stringify(line) + "\n");
const now = () => Number(process.hrtime.bigint() / 1000n);
const namespace = process.env.BENCH_NAMESPACE;
const read = process.env.BENCH_READ === "1";
const write = process.env.BENCH_WRITE === "1";

// BENCH_AJV=1 loads ajv and compiles the configuration schema at start, as the
// runtime did before the validator was compiled at build time (start-up benchmark).
if (process.env.BENCH_AJV === "1") {
  const { createRequire } = await import("node:module");
  const { Ajv } = createRequire(import.meta.resolve("@tessera/runtime"))("ajv");
  const { managerConfigSchema } = await import("@tessera/runtime/config");
  new Ajv({ allErrors: true, strict: false, verbose: true }).compile(managerConfigSchema)({});
}

/**
 * With BENCH_ARRIVAL=1: when the bytes of each object's first watch event were read from the socket,
 * by name, once the cache has synced (`armed`). Nothing in the library is touched: node's
 * `http.client.response.finish` channel hands over each response, and for a ConfigMap watch a listener
 * is put first on its socket's "data" (before the HTTP parser's, so the time is taken before any
 * parsing or decoding), which finds the bench's names (`cm-<n>`, as bytes in protobuf and JSON alike)
 * in each chunk. A name cut by the chunk's end is left for the next chunk, which holds the rest of
 * its event.
 */
const arrival = { armed: false, /** @type {Map<string, number>} */ at: new Map() };
if (process.env.BENCH_ARRIVAL === "1") {
  subscribe("http.client.response.finish", (message) => {
    const { request, response } =
      /** @type {{ request: import("node:http").ClientRequest, response: import("node:http").IncomingMessage }} */ (
        message
      );
    if (!/\/configmaps\?.*\bwatch=/.test(request.path)) return;
    const socket = response.socket;
    if (!socket) return;
    /** @param {Buffer} chunk */
    const onData = (chunk) => {
      if (!arrival.armed) return;
      const t = now();
      const text = chunk.toString("latin1");
      for (const match of text.matchAll(/cm-\d+/g)) {
        if (match.index + match[0].length === text.length) break;
        if (!arrival.at.has(match[0]) && !seen.has(match[0])) arrival.at.set(match[0], t);
      }
    };
    socket.prependListener("data", onData);
    response.once("close", () => socket.removeListener("data", onData));
  });
}
const seen = new Set();
// With BENCH_ARRIVAL=1, also when the event loop could not read the socket: a 10 ms timer that fires
// 50 ms or more late says so, with the CPU the process used meanwhile (about the gap when it was busy,
// about none when it was descheduled or blocked in the kernel).
if (process.env.BENCH_ARRIVAL === "1") {
  let last = now();
  let lastCpu = process.cpuUsage();
  setInterval(() => {
    const t = now();
    const cpu = process.cpuUsage();
    const late = (t - last) / 1000 - 10;
    if (late >= 50) {
      const cpuMs = (cpu.user - lastCpu.user + cpu.system - lastCpu.system) / 1000;
      emit({ ev: "late", t, ms: Number(late.toFixed(1)), cpu: Number(cpuMs.toFixed(1)) });
    }
    last = t;
    lastCpu = cpu;
  }, 10).unref();
  // And V8's GC pauses of 20 ms or more, to tell a stall that is GC from one that is JavaScript.
  // perf_hooks only here: the start-up benchmark measures this replica idle, without the harness's own modules.
  const { PerformanceObserver } = await import("node:perf_hooks");
  new PerformanceObserver((list) => {
    const at = now() - performance.now() * 1000;
    for (const entry of list.getEntries())
      if (entry.duration >= 20)
        emit({ ev: "gc", t: Math.round(at + entry.startTime * 1000), ms: Number(entry.duration.toFixed(1)) });
  }).observe({ entryTypes: ["gc"] });
}

await runMain(async (signal) => {
  const metrics =
    process.env.BENCH_METRICS === "sdk"
      ? await (await import("@tessera/runtime/server")).OpenTelemetrySdkMetrics.create()
      : undefined;
  const manager = await Manager.create({
    ...(metrics ? { metrics } : {}),
    config: {
      name: "bench",
      mode: /** @type {"every-replica" | "sharded"} */ (process.env.BENCH_MODE ?? "every-replica"),
      identity: process.env.BENCH_IDENTITY,
      logLevel: process.env.BENCH_SERVE === "1" ? "info" : "error",
      ...(process.env.BENCH_WIRE === "json" ? { wire: /** @type {const} */ ("json") } : {}),
      // BENCH_SERVE=1: probes and metrics served on ports the system picks, and info logs, as an
      // operator ships (the start-up benchmark's "serving" contender).
      healthBindAddress: process.env.BENCH_SERVE === "1" ? "127.0.0.1:0" : "0",
      metricsBindAddress: process.env.BENCH_SERVE === "1" ? "127.0.0.1:0" : "0",
      // The default Lease timings (client-go's 15 s / 10 s / 2 s), as an operator ships: with the
      // 3 s / 2 s / 0.5 s this once used, members starved of CPU under 1,000 creates/s on 2 cores
      // missed their renew deadline and fenced themselves.
      controllers: { configmap: { concurrency: 16 } },
      cache: { readYourWritesMs: Number(process.env.BENCH_RYOW_MS ?? 0) },
    },
  });
  const client = manager.get(Tokens.Client);
  // When each object's first event reached the informer's handlers: what splits the lag into the
  // time before the informer (API server, socket, decoding, DeltaFIFO) and after (queue, reconcile).
  /** @type {Map<string, number>} */
  const informed = new Map();
  if ((process.env.BENCH_MODE ?? "every-replica") === "every-replica") {
    manager
      .get(Tokens.InformerFactory)
      .informerFor(ConfigMaps, { namespace: "", compact: process.env.BENCH_COMPACT === "1" })
      .addEventHandler(
        {
          onAdd: (object) => {
            const { namespace: ns, name } = object.metadata ?? {};
            if (ns === namespace && name !== undefined && !informed.has(name)) informed.set(name, now());
          },
        },
        { name: "bench-arrival" },
      );
  }
  let total = 0;
  manager
    .controller()
    .for(ConfigMaps, process.env.BENCH_COMPACT === "1" ? { compact: true } : {})
    .complete(async (request, ctx) => {
      total++;
      if (read && ctx.current() === undefined) return;
      if (write && ctx.current()?.metadata?.annotations?.["bench/seen"] === undefined) {
        const ref = { namespace: request.namespace, name: request.name };
        const patch = { metadata: { annotations: { "bench/seen": "1" } } };
        await client.patch(ConfigMaps, ref, { type: "merge", patch }, { signal: ctx.signal });
        await client.get(ConfigMaps, ref, { signal: ctx.signal });
      }
      if (request.namespace !== namespace || seen.has(request.name)) return;
      seen.add(request.name);
      const t = now();
      const i = informed.get(request.name);
      informed.delete(request.name);
      const w = arrival.at.get(request.name);
      arrival.at.delete(request.name);
      emit({
        ev: "r",
        n: request.name,
        t,
        ...(i === undefined ? {} : { i }),
        ...(w === undefined ? {} : { w }),
      });
    });
  const ticker = setInterval(() => emit({ ev: "count", total }), 500);
  const running = manager.run(signal);
  if (await manager.waitForSync(signal)) {
    arrival.armed = true;
    emit({ ev: "ready" });
  }
  try {
    await running;
  } finally {
    clearInterval(ticker);
  }
});
