// Operator replicas as separate processes, each reaching the API server
// through its own FaultProxy, with their JSON log lines parsed as they come:
// the soak's replicas, and the main job's (scripts/demo.mjs).
import { spawn } from "node:child_process";
import { createWriteStream, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { FaultProxy, kubeConfigVia } from "@tessera/testenv";

/**
 * Starts replicas of built examples against a control plane, logging each to
 * `<work>/<name>.log`. `env` is added to (and overrides) each replica's
 * environment; `onLine(replica, entry)` gets each JSON log line, and
 * `onExit(replica, code, signal)` each exit. A replica's `metricsPort` comes
 * from its info-level "metrics: listening" line: keep TESSERA_LOG_LEVEL at
 * info (or debug).
 */
export class Replicas {
  constructor({ cp, work, env = {}, onLine, onExit = () => {} }) {
    this.cp = cp;
    this.work = work;
    this.env = env;
    this.onLine = onLine;
    this.onExit = onExit;
    this.all = [];
    this.next = new Map();
  }

  /** The replicas running and not being stopped, of `example` or of all. */
  live(example) {
    return this.all.filter((r) => !r.gone && !r.stopping && (example === undefined || r.example === example));
  }

  /**
   * Starts one replica of `example`, named `<example>-<n>`, running the built `operator` (its main.js,
   * or the bundle its image runs) with node's `nodeArgs` before it (the image's flags).
   */
  async start(example, operator, nodeArgs = []) {
    const n = this.next.get(example) ?? 0;
    this.next.set(example, n + 1);
    const name = `${example}-${n}`;
    const proxy = new FaultProxy(this.cp.apiserverPort);
    await proxy.start();
    const kubeconfig = join(this.work, `${name}.kubeconfig`);
    writeFileSync(kubeconfig, kubeConfigVia(this.cp.kubeConfig, proxy.url).exportConfig());
    const log = createWriteStream(join(this.work, `${name}.log`));
    const child = spawn(process.execPath, [...nodeArgs, operator], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        KUBECONFIG: kubeconfig,
        TESSERA_IDENTITY: name,
        TESSERA_NAMESPACE: "default",
        TESSERA_LOG_LEVEL: "info",
        TESSERA_HEALTH_BIND_ADDRESS: "0",
        // Port 0, read back from its "metrics: listening" line (below): a port picked free here could
        // be taken by another process's connection before the replica binds it.
        TESSERA_METRICS_BIND_ADDRESS: "127.0.0.1:0",
        // No Lease timings: the runtime's defaults (client-go's 15/10/2 s), as an
        // operator runs them, unless `env` says otherwise. With a 5 s renew deadline
        // every kube-apiserver restart in the soak (6-10 s) fenced every member, and
        // no replica lived long enough for the RSS check.
        ...this.env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const replica = {
      name,
      example,
      child,
      pid: child.pid,
      proxy,
      metricsPort: undefined,
      gone: false,
      stopping: false,
      rss: [],
    };
    replica.exited = new Promise((resolve) =>
      child.on("exit", (code, signal) => {
        replica.gone = true;
        this.onExit(replica, code, signal);
        resolve(signal ?? code);
      }),
    );
    for (const stream of [child.stdout, child.stderr]) {
      stream.pipe(log);
      createInterface({ input: stream }).on("line", (line) => {
        let entry;
        try {
          entry = JSON.parse(line);
        } catch {
          entry = { msg: line, raw: true };
        }
        if (entry.msg === "metrics: listening" && typeof entry.address === "string")
          replica.metricsPort = Number(entry.address.slice(entry.address.lastIndexOf(":") + 1));
        this.onLine?.(replica, entry);
      });
    }
    this.all.push(replica);
    return replica;
  }

  /** Stops a replica with `signal`; the observer does not count its exit as a crash. */
  async stop(replica, signal) {
    replica.stopping = true;
    replica.signal = signal;
    replica.child.kill(signal);
    await replica.exited;
    await replica.proxy.stop();
  }

  /** Stops every replica with SIGTERM, waits for every exit (those already being stopped too), then closes the proxies. */
  async stopAll() {
    await Promise.all(this.live().map((r) => this.stop(r, "SIGTERM")));
    await Promise.all(this.all.map((r) => r.exited));
    await Promise.all(this.all.map((r) => r.proxy.stop().catch(() => {})));
  }
}
