// The client's own share of a cold sync, without the network: a protobuf watch-list stream
// recorded from a real kube-apiserver, replayed in chunks of the size the apiserver's writes
// arrive in, through the same decoder, Reflector and SharedIndexInformer (one handler,
// managedFields left out) as bench/peers/node/informer.js. Time and CPU from the informer's
// construction to synced; one process per run, so each starts with a cold JIT as a real sync does.
//
// Record (a control plane from bench/peers/serve.js, KUBECONFIG set):
//   bash scripts/with-node.sh node bench/reflector/replay-sync.js record <namespace> <configmaps|pods> <file>
// Replay (ROUNDS runs, default 5, each in its own process):
//   bash scripts/with-node.sh node bench/reflector/replay-sync.js <file> <ConfigMap|Pod> [chunk bytes, default 1400]
// (the apiserver's writes arrived in chunks of about 1,400 bytes for 1 KiB ConfigMaps and 2,100 for Pods)
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { fileURLToPath } from "node:url";
import { KubeConfig } from "@kubernetes/client-node";
import { ConfigMaps, Pods } from "@tessera/client";
import { LengthDelimitedFrames, ProtobufCodec } from "@tessera/reflector";
import { SharedIndexInformer, stripManagedFields } from "@tessera/informers";
import { startProfile } from "../peers/node/profile.js";

const [command, ...args] = process.argv.slice(2);
if (command === "record") await record(...args);
else if (process.env.REPLAY_CHILD === "1") await replay(command, ...args);
else {
  const rounds = Number(process.env.ROUNDS ?? 5);
  const runs = [];
  for (let i = 0; i < rounds; i++) {
    const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), command, ...args], {
      env: { ...process.env, REPLAY_CHILD: "1" },
    });
    const run = JSON.parse(out.toString());
    runs.push(run);
    console.log(JSON.stringify(run));
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(
    `median of ${rounds}: ${median(runs.map((r) => r.ms))} ms, CPU ${median(runs.map((r) => r.cpuMs))} ms`,
  );
}

/** Saves a watch-list stream's frames up to and with the initial-events-end bookmark. */
async function record(namespace, resource, file) {
  const kc = new KubeConfig();
  kc.loadFromDefault();
  const query =
    "watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion=&timeoutSeconds=300";
  const options = { method: "GET", headers: { Accept: "application/vnd.kubernetes.protobuf" } };
  await kc.applyToHTTPSOptions(options);
  const marker = Buffer.from("k8s.io/initial-events-end");
  const url = new URL(
    `${kc.getCurrentCluster()?.server}/api/v1/namespaces/${namespace}/${resource}?${query}`,
  );
  /** @type {Buffer[]} */
  const chunks = [];
  await new Promise((resolve, reject) => {
    const req = request(url, options, (res) => {
      res.on("data", (/** @type {Buffer} */ chunk) => {
        chunks.push(chunk);
        if (chunk.indexOf(marker) === -1) return;
        const all = Buffer.concat(chunks);
        let at = 0;
        while (at < all.length) {
          const size = all.readUInt32BE(at);
          const frame = all.subarray(at + 4, at + 4 + size);
          at += 4 + size;
          if (frame.indexOf(marker) !== -1) break;
        }
        writeFileSync(file, all.subarray(0, at));
        console.log(`${file}: ${at} bytes, arrived in ${chunks.length} chunks`);
        req.destroy();
        resolve(undefined);
      });
    });
    req.on("error", (err) =>
      /** @type {NodeJS.ErrnoException} */ (err).code === "ECONNRESET" ? undefined : reject(err),
    );
    req.end();
  });
}

/** One replayed sync; prints its line. */
async function replay(file, kind, chunkArg) {
  const bytes = readFileSync(file);
  const chunkBytes = Number(chunkArg ?? 1400);
  // Built and loaded before the clock starts, as bench/peers/node/informer.js does.
  const codec = new ProtobufCodec();
  await codec.load("v1", [kind, `${kind}List`]);
  const handle = /** @type {typeof ConfigMaps} */ (kind === "Pod" ? Pods : ConfigMaps);
  /** @type {import("@tessera/reflector").ListerWatcher<import("@tessera/client").KubeObject>} */
  const listerWatcher = {
    resource: handle.plural,
    namespace: undefined,
    handle,
    async list() {
      throw new Error("the replay has a watch-list stream only");
    },
    // The recorded stream, a chunk per turn of the event loop as a socket delivers it; then open.
    watch(_options, onEvent, signal) {
      return new Promise((resolve) => {
        const frames = new LengthDelimitedFrames((frame) =>
          onEvent(/** @type {any} */ (codec.decodeWatchEvent(frame, { omitManagedFields: true }))),
        );
        let at = 0;
        const next = () => {
          if (signal?.aborted) return resolve();
          if (at >= bytes.length) return;
          frames.write(bytes.subarray(at, at + chunkBytes));
          at += chunkBytes;
          setImmediate(next);
        };
        setImmediate(next);
      });
    },
  };
  const profiler = process.env.BENCH_CPU_PROFILE ? await startProfile() : undefined;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const informer = new SharedIndexInformer({
    listerWatcher,
    transform: stripManagedFields,
    reflector: { watchList: true, consistencyCheck: false },
  });
  informer.addEventHandler({ onAdd: () => {} });
  void informer.run(new AbortController().signal);
  await informer.waitForSync();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  if (profiler) await profiler.stop(process.env.BENCH_CPU_PROFILE ?? "");
  const objects = informer.lister.list().length;
  process.stdout.write(
    `${JSON.stringify({ objects, ms: Math.round(ms), cpuMs: Math.round((cpu.user + cpu.system) / 1000) })}\n`,
  );
  process.exit(0);
}
