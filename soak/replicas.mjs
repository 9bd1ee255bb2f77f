// Operator replicas as separate processes, each reaching the API server
// through its own FaultProxy (the approach of scripts/demo.mjs), with their
// JSON log lines parsed as they come for the observer.
import { spawn } from "node:child_process";
import { createWriteStream, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { FaultProxy, freePort, kubeConfigVia } from "@tessera/testenv";

/** Starts replicas of built examples against a control plane; `onLine(replica, entry)` gets each JSON log line. */
export class Replicas {
  constructor({ cp, work, onLine, onExit }) {
    this.cp = cp;
    this.work = work;
    this.onLine = onLine;
    this.onExit = onExit;
    this.all = [];
    this.next = new Map();
  }

  live(example) {
    return this.all.filter((r) => !r.gone && (example === undefined || r.example === example));
  }

  /** Starts one replica of `example` (a directory with dist/src/main.js). */
  async start(example, operator) {
    const n = this.next.get(example) ?? 0;
    this.next.set(example, n + 1);
    const name = `${example}-${n}`;
    const proxy = new FaultProxy(this.cp.apiserverPort);
    await proxy.start();
    const kubeconfig = join(this.work, `${name}.kubeconfig`);
    writeFileSync(kubeconfig, kubeConfigVia(this.cp.kubeConfig, proxy.url).exportConfig());
    const metricsPort = await freePort();
    const log = createWriteStream(join(this.work, `${name}.log`));
    const child = spawn(process.execPath, [operator], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        KUBECONFIG: kubeconfig,
        TESSERA_IDENTITY: name,
        TESSERA_NAMESPACE: "default",
        TESSERA_LOG_LEVEL: "info",
        TESSERA_HEALTH_BIND_ADDRESS: "0",
        TESSERA_METRICS_BIND_ADDRESS: `127.0.0.1:${metricsPort}`,
        // Shorter than client-go's 15/10/2 s so that failovers fit a short run,
        // longer than scripts/demo.mjs's 3/2/0.5 s, which fence on a busy machine.
        TESSERA_LEADER_ELECTION_LEASE_DURATION_MS: "8000",
        TESSERA_LEADER_ELECTION_RENEW_DEADLINE_MS: "5000",
        TESSERA_LEADER_ELECTION_RETRY_PERIOD_MS: "1000",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const replica = {
      name,
      example,
      child,
      pid: child.pid,
      proxy,
      metricsPort,
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
        this.onLine(replica, entry);
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

  async stopAll() {
    await Promise.all(this.live().map((r) => this.stop(r, "SIGTERM")));
    await Promise.all(this.all.map((r) => r.proxy.stop().catch(() => {})));
  }
}
