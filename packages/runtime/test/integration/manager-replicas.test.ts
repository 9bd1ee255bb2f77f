// The runtime as operators run it: replicas as separate processes over one
// real API server. Leader mode with a warm standby, graceful SIGTERM, and a
// sharded ring scaled while Widgets change, checked against a ledger the
// test keeps from the replicas' own reconcile records.
import { strict as assert } from "node:assert";
import { eventually, parsePrometheusText, sumSamples, useControlPlane } from "@tessera/testenv";
import { nowMicros, type ReconcileRecord } from "./widget.js";
import { OperatorProcess } from "./support/operator-process.js";
import {
  apiRequestCounts,
  createNamespace,
  createWidget,
  getWidget,
  installWidgetCrd,
  patchWidget,
} from "./support/widget-cluster.js";

const DURATIONS = {
  TESSERA_LEADER_ELECTION_LEASE_DURATION_MS: "3000",
  TESSERA_LEADER_ELECTION_RENEW_DEADLINE_MS: "2000",
  TESSERA_LEADER_ELECTION_RETRY_PERIOD_MS: "500",
};

describe("Manager replicas (separate processes, real API server)", function () {
  this.timeout(10 * 60_000);
  const env = useControlPlane();
  const replicas: OperatorProcess[] = [];
  let kubeconfig = "";
  let system = "";

  before(async () => {
    await installWidgetCrd(env.cp);
    kubeconfig = env.cp.writeKubeconfig();
    system = await createNamespace(env.cp, "operators");
  });
  afterEach(async () => {
    for (const r of replicas.splice(0)) {
      if (r.alive) r.signal("SIGKILL");
      await r.exited;
    }
  });

  async function start(
    name: string,
    extra: Record<string, string>,
  ): Promise<OperatorProcess & { health: number; metrics: number }> {
    // Port 0, read back from the replica: a port picked free here could be taken by another
    // process's outgoing connection before the replica binds it (EADDRINUSE in a CI run).
    const replica = new OperatorProcess(name, {
      KUBECONFIG: kubeconfig,
      TESSERA_NAMESPACE: system,
      TESSERA_IDENTITY: name,
      TESSERA_METRICS_BIND_ADDRESS: "127.0.0.1:0",
      TESSERA_HEALTH_BIND_ADDRESS: "127.0.0.1:0",
      TESSERA_LOG_LEVEL: "warn",
      ...DURATIONS,
      ...extra,
    });
    replicas.push(replica);
    await replica.ready();
    return Object.assign(replica, replica.ports);
  }

  /** The slots `replica` holds in its ring, from its own metrics; 0 when it does not answer. */
  async function slotsOwned(replica: { metrics: number }): Promise<number> {
    try {
      const text = await (await fetch(`http://127.0.0.1:${replica.metrics}/metrics`)).text();
      return sumSamples(parsePrometheusText(text), "tessera_sharding_slots_owned");
    } catch {
      return 0;
    }
  }

  async function readyz(port: number): Promise<number> {
    try {
      return (await fetch(`http://127.0.0.1:${port}/readyz`)).status;
    } catch {
      return 0;
    }
  }

  it("invalid configuration stops start-up with every violation listed, exit code 2", async () => {
    const bad = new OperatorProcess("bad-config", {
      KUBECONFIG: kubeconfig,
      TESSERA_MODE: "primary",
      TESSERA_SHARDING_SLOTS: "100",
      TESSERA_SHUTDOWN_DRAIN_TIMEOUT_MS: "soon",
    });
    replicas.push(bad);
    const exit = await bad.exited;
    assert.equal(exit.code, 2, bad.log);
    assert.match(bad.log, /invalid configuration \(3 problems\)/);
    assert.match(
      bad.log,
      /\/mode: expected one of "leader", "sharded", "every-replica", found "primary" \(from TESSERA_MODE\)/,
    );
    assert.match(
      bad.log,
      /\/sharding\/slots: expected .*power of two.*found 100 \(from TESSERA_SHARDING_SLOTS\)/,
    );
    assert.match(bad.log, /\/shutdown\/drainTimeoutMs: expected an integer, found "soon"/);
  });

  it("leader mode: only the leader reconciles; the warm standby takes over after a kill with no LIST", async () => {
    const ns = await createNamespace(env.cp, "leader");
    const inNs = (r: ReconcileRecord) => r.key.startsWith(`${ns}/`);
    for (let i = 0; i < 5; i++) await createWidget(env.cp, ns, `w${i}`, { data: { i: String(i) } });
    const config = { TESSERA_NAME: "leader-test", TESSERA_MODE: "leader" };
    const a = await start("leader-a", config);
    await eventually(
      "a reconciles all five",
      () => new Set(a.reconciles.filter(inNs).map((r) => r.key)).size === 5,
    );
    const b = await start("leader-b", config);
    await eventually("b's caches are synced (readyz)", async () => (await readyz(b.health)) === 200);
    await patchWidget(env.cp, ns, "w0", { spec: { data: { i: "changed" } } });
    await eventually("a reconciles the change", () =>
      a.reconciles.some((r) => r.key === `${ns}/w0` && r.generation === 2),
    );
    assert.deepEqual(b.reconciles.filter(inNs), [], "the standby reconciled");

    const before = {
      widgets: await apiRequestCounts(env.cp, "widgets"),
      configmaps: await apiRequestCounts(env.cp, "configmaps"),
    };
    const killedAt = nowMicros();
    a.signal("SIGKILL");
    await a.exited;
    await eventually("b reconciles after the failover", () => b.reconciles.filter(inNs).length > 0, 30_000);
    const first = Math.min(...b.reconciles.filter(inNs).map((r) => r.start));
    const after = {
      widgets: await apiRequestCounts(env.cp, "widgets"),
      configmaps: await apiRequestCounts(env.cp, "configmaps"),
    };
    assert.equal(
      after.widgets["LIST"] ?? 0,
      before.widgets["LIST"] ?? 0,
      "widgets were listed again on failover",
    );
    assert.equal(
      after.configmaps["LIST"] ?? 0,
      before.configmaps["LIST"] ?? 0,
      "configmaps were listed again on failover",
    );
    const failoverMs = (first - killedAt) / 1000;
    console.log(
      `      failover: first reconcile by the standby ${Math.round(failoverMs)} ms after the leader was killed`,
    );
    // The Lease expires after its duration (3 s); the standby retries every 500 ms.
    assert.ok(failoverMs < 3000 + 2 * 500 + 2000, `failover took ${failoverMs} ms`);
  });

  it("SIGTERM in the middle of a slow reconcile lets it finish, hands the Lease over at once, and exits 0", async () => {
    const ns = await createNamespace(env.cp, "sigterm");
    const config = { TESSERA_NAME: "sigterm-test", TESSERA_MODE: "leader" };
    const a = await start("term-a", config);
    const b = await start("term-b", config);
    // Longer than the 3 s Lease: the leader must keep renewing while it drains.
    await createWidget(env.cp, ns, "slow", { delayMs: 5000, data: { x: "1" } });
    const leader = await (async () => {
      let found: OperatorProcess | undefined;
      await eventually("a reconcile of the slow widget starts", () => {
        found = [a, b].find((r) => r.lines.some((l) => l.ev === "start" && l.key === `${ns}/slow`));
        return found !== undefined;
      });
      return found!;
    })();
    const standby = leader === a ? b : a;
    const termAt = nowMicros();
    leader.signal("SIGTERM");
    const exit = await leader.exited;
    const exitedAt = nowMicros();
    assert.deepEqual(exit, { code: 0, signal: null }, leader.log);
    const finished = leader.reconcilesOf(`${ns}/slow`);
    assert.equal(finished.length, 1, "the slow reconcile did not finish");
    assert.ok(finished[0]!.end > termAt, "the reconcile ended before SIGTERM: not a mid-reconcile test");
    assert.equal((await getWidget(env.cp, ns, "slow"))?.status?.observedGeneration, 1);
    // The Lease was released: the standby leads well before the 3 s Lease would have expired.
    await patchWidget(env.cp, ns, "slow", { spec: { delayMs: 0 } });
    await eventually("the standby reconciles", () => standby.reconcilesOf(`${ns}/slow`).length > 0, 30_000);
    // From the end of the leader's reconcile: it released the Lease right after, then exited.
    const leaderDone = finished[0]!.end;
    const takeoverMs =
      (Math.min(...standby.reconcilesOf(`${ns}/slow`).map((r) => r.start)) - leaderDone) / 1000;
    console.log(
      `      handover: the standby reconciled ${Math.round(takeoverMs)} ms after the leader's reconcile ended; ` +
        `the leader exited ${Math.round((exitedAt - leaderDone) / 1000)} ms after it`,
    );
    assert.ok(takeoverMs >= 0, "the standby reconciled while the leader still was");
    assert.ok(takeoverMs < 3000, `the standby waited ${takeoverMs} ms: was the Lease released?`);
  });

  it("sharded mode: 2,000 Widgets over 3 -> 4 -> 2 replicas, never one Widget on two replicas at once, every last change reconciled", async () => {
    const ns = await createNamespace(env.cp, "sharded");
    const count = 2000;
    const names = Array.from({ length: count }, (_, i) => `w${i}`);
    const config = {
      TESSERA_NAME: "sharded-test",
      TESSERA_MODE: "sharded",
      TESSERA_SHARDING_SLOTS: "64",
      // 2,000 creates load 2 cores; a member that missed a 2 s renew deadline would fence and exit.
      TESSERA_LEADER_ELECTION_LEASE_DURATION_MS: "8000",
      TESSERA_LEADER_ELECTION_RENEW_DEADLINE_MS: "5000",
      TESSERA_LEADER_ELECTION_RETRY_PERIOD_MS: "1000",
    };
    const first = await Promise.all(["s1", "s2", "s3"].map((n) => start(n, config)));
    // The ring settles: each of the three holds its share of the 64 slots.
    await eventually("the 64 slots are shared by the three replicas", async () => {
      const owned = await Promise.all(first.map(slotsOwned));
      return owned.every((n) => n >= 21) && owned.reduce((a, b) => a + b, 0) === 64;
    });
    await inBatches(names, 25, (name) => createWidget(env.cp, ns, name, { data: { v: "0" } }));
    const all = () => replicas.filter((r) => r.name.startsWith("s"));
    const reconciledKeys = () => new Set(all().flatMap((r) => r.reconciles.map((x) => x.key)));
    await eventually(
      "every Widget reconciled once",
      () => names.every((n) => reconciledKeys().has(`${ns}/${n}`)),
      180_000,
    );
    // Before any scaling, each replica reconciled only its own slots: no key on two replicas.
    const owners = new Map<string, string>();
    for (const r of first)
      for (const rec of r.reconciles.filter((x) => x.key.startsWith(`${ns}/`))) {
        const other = owners.get(rec.key);
        assert.ok(other === undefined || other === r.name, `${rec.key} reconciled by ${other} and ${r.name}`);
        owners.set(rec.key, r.name);
      }
    for (const r of first)
      assert.ok(r.reconciles.length > count / 10, `${r.name} reconciled only ${r.reconciles.length}`);
    // Each member exports its backlog for an autoscaler, labelled by ring and member.
    for (const r of first) {
      const families = parsePrometheusText(
        await (await fetch(`http://127.0.0.1:${r.metrics}/metrics`)).text(),
      );
      for (const name of ["tessera_ring_backlog_depth", "tessera_ring_backlog_oldest_seconds"]) {
        assert.equal(families.get(name)?.type, "gauge", `${r.name}: ${name}`);
        assert.deepEqual(families.get(name)?.samples[0]?.labels, {
          ring: "sharded-test-widget",
          member: r.name,
        });
      }
    }

    let round = 0;
    const change = async () => {
      round++;
      await inBatches(
        names.filter((_, i) => i % 4 === round % 4),
        25,
        (name) => patchWidget(env.cp, ns, name, { spec: { data: { v: String(round) } } }),
      );
    };
    await change();
    await start("s4", config); // 3 -> 4
    await change();
    first[0]!.signal("SIGTERM"); // 4 -> 2
    first[1]!.signal("SIGTERM");
    await change();
    assert.equal((await first[0]!.exited).code, 0, first[0]!.log);
    assert.equal((await first[1]!.exited).code, 0, first[1]!.log);
    await change();

    // Every Widget's last generation was reconciled (by someone), and status says so.
    const finalGeneration = new Map<string, number>();
    await inBatches(names, 50, async (name) => {
      const w = await getWidget(env.cp, ns, name);
      finalGeneration.set(`${ns}/${name}`, w!.metadata!.generation!);
    });
    const records = () => all().flatMap((r) => r.reconciles.map((x) => ({ ...x, replica: r.name })));
    await eventually(
      "every last change reconciled",
      () => {
        const seen = new Set(
          records()
            .filter((x) => x.generation === finalGeneration.get(x.key))
            .map((x) => x.key),
        );
        return [...finalGeneration.keys()].every((k) => seen.has(k));
      },
      180_000,
    );
    // The ledger: no two replicas ever reconciled one Widget at overlapping times.
    const byKey = new Map<string, Array<ReconcileRecord & { replica: string }>>();
    for (const rec of records())
      if (rec.key.startsWith(`${ns}/`)) byKey.set(rec.key, [...(byKey.get(rec.key) ?? []), rec]);
    let handedOver = 0;
    for (const [key, recs] of byKey) {
      recs.sort((x, y) => x.start - y.start);
      for (let i = 1; i < recs.length; i++) {
        const prev = recs[i - 1]!;
        const cur = recs[i]!;
        if (prev.replica !== cur.replica) {
          handedOver++;
          assert.ok(
            cur.start >= prev.end,
            `${key}: ${cur.replica} started while ${prev.replica} was reconciling`,
          );
        }
      }
    }
    console.log(
      `      ${records().length} reconciles; ${handedOver} handovers of a Widget between replicas, none overlapping`,
    );
    assert.ok(handedOver > 0, "no Widget changed replica: the scaling did not move slots");
  });
});

async function inBatches<T>(
  items: readonly T[],
  size: number,
  fn: (item: T) => Promise<unknown>,
): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}
