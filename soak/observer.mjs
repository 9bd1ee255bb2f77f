// The observer: independent of the framework's code. It reads the API server
// directly (fresh LISTs), the replicas' /metrics, their JSON log lines and
// /proc/<pid>/status, and records violations with the events around them.
import { readFileSync } from "node:fs";
import { parsePrometheusText } from "@tessera/testenv";
import { behind, overlappingReconciles, twoLeaders } from "./invariants.mjs";
import { LOGGED_VIOLATIONS } from "./report.mjs";

export const TENANTS = "/apis/tenancy.example.com/v1alpha1/namespaces/default/tenants";
export const MIRROR_TARGET = "soak-mirror";

export class Observer {
  constructor({ cp, replicas, started }) {
    this.cp = cp;
    this.replicas = replicas;
    this.started = started;
    this.events = []; // [ms since start, text]
    this.violations = [];
    this.spans = new Map(); // key -> spans
    this.reconciles = 0;
    // Reconciles that found no Tenant in their replica's cache. The soak deletes no Tenant, so
    // each is one of a Tenant outside the replica's slots: what the dequeue guard keeps out.
    // Counted, not a violation: harmless to this example's reconciler, and not proven impossible.
    this.tenantsMissing = 0;
    this.tenantGenerations = new Map(); // key -> last generation written
    this.mirrorValues = new Map(); // source name -> last value written
    this.twoLeaderRounds = 0;
    this.restarts = 0;
  }

  now() {
    return Date.now() - this.started;
  }

  event(text) {
    this.events.push([this.now(), text]);
  }

  violation(invariant, detail) {
    const at = this.now();
    // The events around the first few are what a reader needs; a broken
    // invariant can be hit thousands of times, and the log must stay readable.
    const first = this.violations.length < LOGGED_VIOLATIONS;
    const around = first
      ? this.events.filter(([t]) => t >= at - 15_000).map(([t, e]) => `${(t / 1000).toFixed(1)}s ${e}`)
      : [];
    this.violations.push({ at, invariant, detail, events: around });
    this.event(`VIOLATION ${invariant}: ${detail}`);
    if (first) console.log(`soak: VIOLATION at ${(at / 1000).toFixed(1)} s: ${invariant}: ${detail}`);
    else if (this.violations.length === LOGGED_VIOLATIONS + 1)
      console.log(`soak: more violations; the rest are counted in the summary and written to the JSON`);
  }

  /** Each JSON log line of a replica: reconcile spans and unhandled rejections. */
  onLine(replica, entry) {
    if (entry.msg === "reconciled" && typeof entry.startedAt === "number") {
      this.reconciles++;
      if (entry.found === false) this.tenantsMissing++;
      const key = `${entry.namespace}/${entry.name}`;
      const span = { replica: replica.name, key, startedAt: entry.startedAt, endedAt: entry.endedAt };
      const list = this.spans.get(key) ?? [];
      list.push(span);
      if (list.length > 20) list.shift();
      this.spans.set(key, list);
      for (const o of overlappingReconciles(list))
        if (o.b === span || o.a === span)
          this.violation(
            "no key reconciled by two replicas at once",
            `${key}: ${o.a.replica} ${o.a.startedAt}-${o.a.endedAt} and ${o.b.replica} ${o.b.startedAt}-${o.b.endedAt}`,
          );
    } else if (/unhandled(Rejection| promise rejection)|UnhandledPromiseRejection/i.test(entry.msg ?? "")) {
      this.violation("no unhandled rejection", `${replica.name}: ${String(entry.msg).slice(0, 300)}`);
    } else if (entry.msg === "manager: stopping" && entry.reason) {
      replica.lastError = entry.reason;
      this.event(`${replica.name}: stopping: ${entry.reason}`);
    } else if (entry.level === "error" || entry.raw) {
      if (entry.level === "error" || /Error: /.test(entry.msg ?? ""))
        replica.lastError = `${entry.msg} ${JSON.stringify(entry.error ?? "")}`;
      this.event(
        `${replica.name}: ${String(entry.msg).slice(0, 200)}${entry.error ? `: ${JSON.stringify(entry.error).slice(0, 200)}` : ""}`,
      );
    }
  }

  /**
   * A replica's exit. One that stops by itself with exit code 1 after losing
   * its member Lease or its leadership does so on purpose, to be restarted
   * (as a kubelet would); any other exit not asked for is a crash.
   */
  onExit(replica, code, signal) {
    this.event(`${replica.name} exited (${signal ?? code})`);
    if (!replica.stopping) {
      if (code === 1 && /fenced itself|leader election lost/.test(replica.lastError ?? "")) this.restarts++;
      else
        this.violation(
          "no replica crashes",
          `${replica.name} exited by itself with ${signal ?? code}: ${replica.lastError}`,
        );
    } else if (replica.signal === "SIGTERM" && code !== 0) {
      this.violation("clean drain on SIGTERM", `${replica.name} exited with ${signal ?? code}`);
    }
  }

  async get(path) {
    const res = await this.cp.raw(path, { signal: AbortSignal.timeout(10_000) });
    if (res.status !== 200) throw new Error(`GET ${path}: HTTP ${res.status}`);
    return JSON.parse(res.body);
  }

  /** What each live replica's leader_election_master_status says it leads. */
  async leading() {
    const out = new Map();
    await Promise.all(
      this.replicas.live().map(async (r) => {
        try {
          const res = await fetch(`http://127.0.0.1:${r.metricsPort}/metrics`, {
            signal: AbortSignal.timeout(2000),
          });
          const names = [];
          for (const family of parsePrometheusText(await res.text()).values())
            for (const s of family.samples)
              if (s.name === "leader_election_master_status" && s.value === 1) names.push(s.labels.name);
          out.set(r, names);
        } catch {
          // not listening yet, or going
        }
      }),
    );
    return out;
  }

  /** One round of checks that do not wait for convergence: leaders, RSS. */
  async sample() {
    const leading = await this.leading();
    const byName = new Map([...leading].map(([r, names]) => [r.name, names]));
    const doubles = twoLeaders(byName);
    // One scrape round is not atomic: two rounds in a row are needed.
    this.twoLeaderRounds = doubles.length ? this.twoLeaderRounds + 1 : 0;
    if (this.twoLeaderRounds === 2)
      this.violation("never two leaders", doubles.map((d) => `${d.name}: ${d.who.join(", ")}`).join("; "));
    for (const r of this.replicas.live()) {
      try {
        const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${r.pid}/status`, "utf8"))[1]);
        r.rss.push([this.now(), kb / 1024]);
      } catch {
        // exited between the check and the read
      }
    }
    return leading;
  }

  /** The keys not yet reconciled at the generations/values in `wanted` (a snapshot of the writes), by fresh LISTs. */
  async lagging(wanted) {
    const tenants = await this.get(TENANTS);
    const observed = new Map(
      tenants.items
        .filter((t) => t.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"))
        .map((t) => [t.metadata.name, t.status?.observedGeneration ?? 0]),
    );
    const late = behind(wanted.tenants, observed);
    const copies = await this.get(`/api/v1/namespaces/${MIRROR_TARGET}/configmaps`);
    const copied = new Map(
      copies.items.map((c) => [c.metadata.name.replace(/^default\./, ""), Number(c.data?.v ?? 0)]),
    );
    for (const [name, v] of wanted.mirror) if ((copied.get(name) ?? -1) < v) late.push(`mirror:${name}`);
    return late;
  }

  snapshot() {
    return { tenants: new Map(this.tenantGenerations), mirror: new Map(this.mirrorValues) };
  }
}
