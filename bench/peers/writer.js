// The churn writer of bench/peers: merge-patches the ConfigMaps that data.js
// created, round-robin, at a steady rate over keep-alive connections, and
// records each write's new resourceVersion and the monotonic time (µs) its
// response arrived, for lag measured from the write's response.
import { Agent, request } from "node:https";

/** CLOCK_MONOTONIC in µs, as the contenders print it. */
export const now = () => Number(process.hrtime.bigint() / 1000n);

export class ChurnWriter {
  /**
   * @param {import("@tessera/testenv").ControlPlane} cp
   * @param {string} namespace where the ConfigMaps cm-000000.. live
   * @param {number} objects how many of them to cycle through
   */
  constructor(cp, namespace, objects, inFlight = 256) {
    this.url = new URL(cp.apiserverUrl);
    this.namespace = namespace;
    this.objects = objects;
    this.inFlight = inFlight;
    this.agent = new Agent({
      keepAlive: true,
      maxSockets: inFlight,
      ca: cp.caPem,
      cert: cp.adminCredentials.certPem,
      key: cp.adminCredentials.keyPem,
    });
    this.seq = 0;
  }

  /** One merge patch of ConfigMap `i`; resolves with its new resourceVersion. */
  patch(i) {
    const name = `cm-${String(i).padStart(6, "0")}`;
    const seq = this.seq++;
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: this.url.hostname,
          port: this.url.port,
          path: `/api/v1/namespaces/${this.namespace}/configmaps/${name}`,
          method: "PATCH",
          agent: this.agent,
          headers: { "Content-Type": "application/merge-patch+json" },
        },
        (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (c) => (body += c));
          res.on("end", () =>
            res.statusCode === 200
              ? resolve(/"resourceVersion":"(\d+)"/.exec(body)?.[1])
              : reject(new Error(`PATCH ${name}: HTTP ${res.statusCode} ${body.slice(0, 200)}`)),
          );
        },
      );
      req.on("error", reject);
      req.end(JSON.stringify({ data: { seq: String(seq) } }));
    });
  }

  /**
   * Writes at `rate` per second for `seconds` (fewer where the apiserver cannot
   * take them: at most `inFlight` wait at once).
   * @returns {Promise<{ written: Map<string, number>, seconds: number, failed: number }>}
   *   resourceVersion -> response time (µs), and how long the writing took
   */
  async churn(rate, seconds) {
    /** @type {Map<string, number>} */
    const written = new Map();
    const t0 = now();
    const end = t0 + seconds * 1e6;
    let issued = 0;
    let failed = 0;
    const pending = new Set();
    while (now() < end) {
      const due = Math.floor(((now() - t0) / 1e6) * rate);
      while (issued < due && pending.size < this.inFlight) {
        const p = this.patch(issued++ % this.objects)
          .then((rv) => written.set(rv, now()))
          .catch(() => failed++)
          .finally(() => pending.delete(p));
        pending.add(p);
      }
      await new Promise((r) => setTimeout(r, 1));
    }
    await Promise.all(pending);
    return { written, seconds: (now() - t0) / 1e6, failed };
  }

  close() {
    this.agent.destroy();
  }
}
