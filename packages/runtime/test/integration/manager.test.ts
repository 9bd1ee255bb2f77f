// One manager in this process over the real API server: the Widget
// reconciler's create, update and delete flows, owned objects kept as
// declared, predicates, and start-up errors a user meets.
import { strict as assert } from "node:assert";
import {
  eventually,
  FaultProxy,
  kubeConfigVia,
  parsePrometheusText,
  sumSamples,
  useControlPlane,
} from "@tessera/testenv";
import { ContainerModule } from "inversify";
import { CapturingLogger } from "@tessera/core/testing";
import { Leases } from "@tessera/client";
import { ApiClient, Manager, Tokens, type ManagerConfigInput } from "../../src/index.js";
import { LeaderElectionLostError, requestKey, RingMemberFencedError } from "../../src/controller.js";
import { LedgerToken, WidgetReconciler, Widgets, nowMicros, type ReconcileRecord } from "./widget.js";
import {
  createNamespace,
  createWidget,
  deleteConfigMap,
  deleteWidget,
  getConfigMap,
  getWidget,
  installWidgetCrd,
  patchConfigMap,
  patchWidget,
} from "./support/widget-cluster.js";

describe("Manager (in process, real API server)", function () {
  this.timeout(120_000);
  const env = useControlPlane();
  const stops: Array<() => Promise<void>> = [];
  before(async () => installWidgetCrd(env.cp));
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
  });

  const quiet: ManagerConfigInput = {
    healthBindAddress: "0",
    metricsBindAddress: "0",
    logLevel: "error",
    leaderElection: { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500 },
  };

  /** A manager running the Widget reconciler; its ledger records every reconcile. */
  async function startWidgetManager(config: ManagerConfigInput = {}, prepare?: (manager: Manager) => void) {
    const records: ReconcileRecord[] = [];
    const manager = await Manager.create({
      config: { ...quiet, name: `widgets-${Math.random().toString(36).slice(2, 7)}`, ...config },
      kubeConfig: env.cp.kubeConfig,
      env: {},
    });
    manager.register(
      new ContainerModule(({ bind }) => {
        bind(LedgerToken).toConstantValue({
          started: () => {},
          finished: (r: ReconcileRecord) => records.push(r),
        });
      }),
    );
    manager.register(WidgetReconciler);
    prepare?.(manager);
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    stops.push(async () => {
      stop.abort();
      await running;
    });
    return { manager, records, running };
  }

  it("creates, updates and forgets: the owned ConfigMap follows the Widget, status records the generation", async () => {
    const ns = await createNamespace(env.cp, "crud");
    const logger = new CapturingLogger();
    const { records } = await startWidgetManager({ mode: "every-replica" }, (m) =>
      m.rebind(Tokens.Logger, logger),
    );
    const created = await createWidget(env.cp, ns, "w1", { data: { colour: "blue" } });
    await eventually(
      "the ConfigMap exists",
      async () => (await getConfigMap(env.cp, ns, "w1")) !== undefined,
    );
    const cm = (await getConfigMap(env.cp, ns, "w1"))!;
    assert.deepEqual(cm.data, { colour: "blue" });
    const owner = cm.metadata?.ownerReferences?.[0];
    assert.equal(owner?.uid, created.metadata?.uid);
    assert.equal(owner?.controller, true);
    await eventually(
      "status.observedGeneration is 1",
      async () => (await getWidget(env.cp, ns, "w1"))?.status?.observedGeneration === 1,
    );

    await patchWidget(env.cp, ns, "w1", { spec: { data: { colour: "red", size: "L" } } });
    await eventually(
      "the ConfigMap has the new data",
      async () => (await getConfigMap(env.cp, ns, "w1"))?.data?.["size"] === "L",
    );
    assert.deepEqual((await getConfigMap(env.cp, ns, "w1"))?.data, { colour: "red", size: "L" });
    await eventually(
      "status.observedGeneration is 2",
      async () => (await getWidget(env.cp, ns, "w1"))?.status?.observedGeneration === 2,
    );

    await deleteWidget(env.cp, ns, "w1");
    await eventually("a reconcile saw the Widget gone", () =>
      records.some((r) => r.key === `${ns}/w1` && !r.found),
    );
  });

  it("recreates a deleted owned ConfigMap within a second and reverts a change to its data", async () => {
    const ns = await createNamespace(env.cp, "owned");
    await startWidgetManager({ mode: "every-replica" });
    await createWidget(env.cp, ns, "w", { data: { k: "v" } });
    await eventually("the ConfigMap exists", async () => (await getConfigMap(env.cp, ns, "w")) !== undefined);

    const deletedAt = nowMicros();
    await deleteConfigMap(env.cp, ns, "w");
    await eventually(
      "the ConfigMap is back",
      async () => (await getConfigMap(env.cp, ns, "w")) !== undefined,
      10_000,
    );
    const recreatedMs = (nowMicros() - deletedAt) / 1000;
    console.log(`      recreated ${Math.round(recreatedMs)} ms after the delete`);
    assert.ok(recreatedMs < 1000, `recreated after ${recreatedMs} ms`);

    await patchConfigMap(env.cp, ns, "w", { data: { k: "tampered" } });
    await eventually(
      "the data is reverted",
      async () => (await getConfigMap(env.cp, ns, "w"))?.data?.["k"] === "v",
      10_000,
    );
  });

  it("with the generation predicate, a status-only change does not reconcile; a spec change does", async () => {
    const ns = await createNamespace(env.cp, "predicate");
    const { records } = await startWidgetManager({ mode: "every-replica" });
    await createWidget(env.cp, ns, "w", { data: { a: "1" } });
    await eventually(
      "status.observedGeneration is 1",
      async () => (await getWidget(env.cp, ns, "w"))?.status?.observedGeneration === 1,
    );
    // Let the reconcile caused by its own status write (filtered) and the ConfigMap's settle.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const before = records.filter((r) => r.key === `${ns}/w`).length;
    await patchWidget(env.cp, ns, "w", { status: { observedGeneration: 1000 } }, "/status");
    // A later spec change of another Widget shows the pipeline is flowing past the status change.
    await createWidget(env.cp, ns, "sentinel", {});
    await eventually("the sentinel is reconciled", () => records.some((r) => r.key === `${ns}/sentinel`));
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(
      records.filter((r) => r.key === `${ns}/w`).length,
      before,
      "the status-only change was reconciled",
    );
    await patchWidget(env.cp, ns, "w", { spec: { data: { a: "2" } } });
    await eventually("the spec change is reconciled", () =>
      records.some((r) => r.key === `${ns}/w` && r.generation === 2),
    );
  });

  it("serves /metrics with controller-runtime's names and types; reconcile_total equals the reconciles counted; runs registered runnables", async () => {
    const ns = await createNamespace(env.cp, "metrics");
    const ran: string[] = [];
    const runnable = (name: string, needsLeader: boolean) => ({
      needsLeader,
      run: async (signal: AbortSignal) => {
        ran.push(name);
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      },
    });
    const { manager, records } = await startWidgetManager(
      { mode: "leader", metricsBindAddress: "127.0.0.1:0", healthBindAddress: "127.0.0.1:0" },
      (m) => m.register(runnable("everywhere", false)).register(runnable("on the leader", true)),
    );
    const { metrics, health } = await manager.endpoints();
    assert.ok(metrics && health);
    for (let i = 0; i < 5; i++) await createWidget(env.cp, ns, `m${i}`, { data: { i: String(i) } });
    await eventually(
      "all five reconciled",
      () => new Set(records.filter((r) => r.key.startsWith(`${ns}/`)).map((r) => r.key)).size === 5,
    );
    await eventually(
      "/readyz is ok",
      async () => (await fetch(`http://127.0.0.1:${health.port}/readyz`)).status === 200,
    );
    const healthz = await fetch(`http://127.0.0.1:${health.port}/healthz?verbose`);
    assert.equal(healthz.status, 200);
    assert.match(await healthz.text(), /\[\+\]watches ok/);

    const scrape = async () => {
      const res = await fetch(`http://127.0.0.1:${metrics.port}/metrics`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get("content-type") ?? "", /^text\/plain/);
      return parsePrometheusText(await res.text());
    };
    const expected: Record<string, string> = {
      controller_runtime_reconcile_total: "counter",
      controller_runtime_reconcile_errors_total: "counter",
      controller_runtime_terminal_reconcile_errors_total: "counter",
      controller_runtime_reconcile_panics_total: "counter",
      controller_runtime_reconcile_timeouts_total: "counter",
      controller_runtime_reconcile_time_seconds: "histogram",
      controller_runtime_active_workers: "gauge",
      controller_runtime_max_concurrent_reconciles: "gauge",
      workqueue_depth: "gauge",
      workqueue_adds_total: "counter",
      workqueue_queue_duration_seconds: "histogram",
      workqueue_work_duration_seconds: "histogram",
      workqueue_retries_total: "counter",
      workqueue_unfinished_work_seconds: "gauge",
      workqueue_longest_running_processor_seconds: "gauge",
      leader_election_master_status: "gauge",
      tessera_reflector_events_total: "counter",
      tessera_informer_objects: "gauge",
    };
    const families = await scrape();
    for (const [name, type] of Object.entries(expected)) {
      assert.equal(
        families.get(name)?.type,
        type,
        `${name}: expected a ${type}, found ${families.get(name)?.type ?? "nothing"}`,
      );
    }
    assert.equal(
      sumSamples(families, "controller_runtime_max_concurrent_reconciles", { controller: "widget" }),
      8,
    );
    assert.equal(sumSamples(families, "leader_election_master_status"), 1);
    assert.deepEqual([...ran].sort(), ["everywhere", "on the leader"], "registered runnables run");
    // Quiet now: the counter equals the ledger, per result.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const counted = await scrape();
    const ok = records.filter((r) => r.error === undefined).length;
    const failed = records.length - ok;
    assert.equal(
      sumSamples(counted, "controller_runtime_reconcile_total", { controller: "widget", result: "success" }),
      ok,
    );
    assert.equal(
      sumSamples(counted, "controller_runtime_reconcile_total", { controller: "widget", result: "error" }),
      failed,
    );
    assert.equal(
      sumSamples(counted, "controller_runtime_reconcile_errors_total", { controller: "widget" }),
      failed,
    );
    assert.equal(
      sumSamples(
        counted,
        "controller_runtime_reconcile_time_seconds",
        { controller: "widget" },
        "controller_runtime_reconcile_time_seconds_count",
      ),
      records.length,
    );
  });

  it("aborts the reconciles in flight at once when leadership is lost, without waiting for the drain", async () => {
    const ns = await createNamespace(env.cp, "lost");
    const manager = await Manager.create({
      config: { ...quiet, name: "lost-leader", namespace: ns, shutdown: { drainTimeoutMs: 60_000 } },
      kubeConfig: env.cp.kubeConfig,
      env: {},
    });
    let aborted: ((reason: unknown) => void) | undefined;
    const abortedReason = new Promise<unknown>((resolve) => (aborted = resolve));
    let started = false;
    manager
      .controller()
      .for(Widgets)
      .mode("leader")
      .complete(async (_request, ctx) => {
        started = true;
        // A long reconcile that honours its signal.
        await new Promise<void>((resolve) =>
          ctx.signal.addEventListener("abort", () => (aborted?.(ctx.signal.reason), resolve()), {
            once: true,
          }),
        );
      });
    const running = manager.run(new AbortController().signal);
    await createWidget(env.cp, ns, "slow");
    await eventually("the reconcile started", () => started);

    // Another process takes the Lease (as a standby would after a partition).
    const client = new ApiClient(env.cp.kubeConfig, { fieldManager: "thief" });
    const lease = (await client.get(Leases, { name: "lost-leader-leader", namespace: ns }))!;
    await client.update(Leases, {
      ...lease,
      spec: {
        ...lease.spec,
        holderIdentity: "someone-else",
        renewTime: new Date().toISOString().replace(/Z$/, "000Z") as never /* MicroTime */,
      },
    });
    const t0 = Date.now();
    await abortedReason; // with the 60 s drain, only the loss can abort it this soon
    const abortedAfterMs = Date.now() - t0;
    assert.ok(abortedAfterMs < 20_000, `aborted ${abortedAfterMs} ms after the Lease was taken`);
    await assert.rejects(running, LeaderElectionLostError);
  });

  it("a sharded member that fences itself aborts its reconciles at once and stops the manager, so the process restarts", async () => {
    const ns = await createNamespace(env.cp, "fenced");
    // Every request of this manager goes through the proxy; stalling it starves the member Lease's renewals.
    const proxy = new FaultProxy(Number(new URL(env.cp.apiserverUrl).port));
    await proxy.start();
    try {
      const manager = await Manager.create({
        config: { ...quiet, name: "fenced-member", namespace: ns, shutdown: { drainTimeoutMs: 60_000 } },
        kubeConfig: kubeConfigVia(env.cp.kubeConfig, proxy.url),
        env: {},
      });
      let aborted: ((reason: unknown) => void) | undefined;
      const abortedReason = new Promise<unknown>((resolve) => (aborted = resolve));
      let started = false;
      manager
        .controller()
        .for(Widgets)
        .mode("sharded")
        .complete(async (_request, ctx) => {
          started = true;
          await new Promise<void>((resolve) =>
            ctx.signal.addEventListener("abort", () => (aborted?.(ctx.signal.reason), resolve()), {
              once: true,
            }),
          );
        });
      const running = manager.run(new AbortController().signal);
      running.catch(() => undefined); // asserted below
      await createWidget(env.cp, ns, "slow");
      await eventually("the reconcile started", () => started);

      proxy.stall();
      const t0 = Date.now();
      await abortedReason; // with the 60 s drain, only the fence can abort it this soon
      const abortedAfterMs = Date.now() - t0;
      // The renew deadline is 2 s; a fence that did not stop the work would leave it running for good.
      assert.ok(abortedAfterMs < 20_000, `aborted ${abortedAfterMs} ms after the proxy stalled`);
      proxy.stall(false);
      const error = await running.then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(error instanceof RingMemberFencedError, `the run rejected with ${String(error)}`);
      assert.match(error.message, /fenced itself .*renewDeadline.*restarts and rejoins the ring/);
    } finally {
      proxy.stall(false);
      await proxy.stop();
    }
  });

  it("a sharded member that hands slots over drops the keys of those slots it had queued: no reconcile of an object outside its slots", async () => {
    const ns = await createNamespace(env.cp, "handover");
    interface Seen {
      member: string;
      key: string;
      found: boolean;
      start: number;
      end: number;
    }
    const seen: Seen[] = [];
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    let gated = false;
    const member = async (identity: string) => {
      const manager = await Manager.create({
        config: { ...quiet, name: "handover", namespace: ns, identity },
        kubeConfig: env.cp.kubeConfig,
        env: {},
      });
      manager
        .controller()
        .for(Widgets)
        .mode("sharded")
        .complete(async (request, ctx) => {
          const start = nowMicros();
          // Read as a reconciler does: a member reconciling an object of another member's
          // slots finds nothing in its cache, and would take it for deleted.
          const found = ctx.current() !== undefined;
          if (request.name === "gate") {
            gated = true;
            await gate;
          }
          seen.push({ member: identity, key: requestKey(request), found, start, end: nowMicros() });
        });
      const stop = new AbortController();
      const running = manager.run(stop.signal);
      stops.push(async () => {
        stop.abort();
        await running;
      });
    };
    const reconciledBy = (identity: string, key: string) =>
      seen.some((r) => r.member === identity && r.key === key && r.found);

    await member("member-a");
    await createWidget(env.cp, ns, "warm");
    await eventually("member-a holds the ring and reconciled", () => reconciledBy("member-a", `${ns}/warm`));
    // One worker: while it waits at the gate, every Widget created now is queued on member-a.
    await createWidget(env.cp, ns, "gate");
    await eventually("the gated reconcile started", () => gated);
    const names = Array.from({ length: 40 }, (_, i) => `queued-${i}`);
    await Promise.all(names.map((name) => createWidget(env.cp, ns, name)));

    await member("member-b");
    // The handover completes at once unless the gated Widget's slot moves: then it waits for the gate.
    await eventually("member-b reconciled", () => seen.some((r) => r.member === "member-b"), 10_000).catch(
      () => undefined,
    );
    openGate();
    await eventually("every queued Widget reconciled by its member", () =>
      names.every((n) => seen.some((r) => r.key === `${ns}/${n}` && r.found)),
    );
    const movedWhileQueued = names.filter((n) => reconciledBy("member-b", `${ns}/${n}`));
    assert.ok(
      movedWhileQueued.length > 0 && movedWhileQueued.length < names.length,
      `member-b took ${movedWhileQueued.length} of the ${names.length} Widgets queued on member-a`,
    );
    // Let member-a's worker run through the rest of its queue.
    await new Promise((resolve) => setTimeout(resolve, 1000));

    const outside = seen.filter((r) => !r.found);
    assert.deepEqual(
      outside.map((r) => `${r.member} ${r.key}`),
      [],
      "reconciles of Widgets that were not in the member's slots (none was deleted)",
    );
    for (const n of movedWhileQueued) {
      const a = seen.filter((r) => r.key === `${ns}/${n}` && r.member === "member-a");
      const b = seen.filter((r) => r.key === `${ns}/${n}` && r.member === "member-b");
      for (const x of a)
        for (const y of b)
          assert.ok(x.end <= y.start || y.end <= x.start, `${n} reconciled by both members at once`);
    }
  });

  it("counts its API requests in client-go's rest_client metrics: the client's writes and the leader Lease's", async () => {
    const { manager, records } = await startWidgetManager({
      mode: "leader",
      metricsBindAddress: "127.0.0.1:0",
    });
    const { metrics } = await manager.endpoints();
    assert.ok(metrics);
    const ns = await createNamespace(env.cp, "rest-metrics");
    await createWidget(env.cp, ns, "counted", { data: { a: "1" } });
    await eventually("the widget reconciled", () => records.some((r) => r.key === `${ns}/counted`));
    const host = new URL(env.cp.kubeConfig.getCurrentCluster()!.server).host;
    const scrape = async () =>
      parsePrometheusText(await (await fetch(`http://127.0.0.1:${metrics.port}/metrics`)).text());
    // The Lease is created (POST), then renewed (PUT) every retry period; the reconciler applies (PATCH).
    await eventually(
      "a Lease renewal counted",
      async () =>
        sumSamples(await scrape(), "rest_client_requests_total", { method: "PUT", code: "200", host }) > 0,
    );
    const families = await scrape();
    assert.equal(families.get("rest_client_requests_total")?.type, "counter");
    assert.equal(families.get("rest_client_request_duration_seconds")?.type, "histogram");
    assert.ok(sumSamples(families, "rest_client_requests_total", { method: "POST", code: "201", host }) >= 1);
    assert.ok(sumSamples(families, "rest_client_requests_total", { method: "PATCH", host }) >= 2);
    assert.ok(
      sumSamples(
        families,
        "rest_client_request_duration_seconds",
        { verb: "PATCH", host },
        "rest_client_request_duration_seconds_count",
      ) >= 2,
    );
  });

  it("fails start-up on a kind discovery does not know, naming its group, version and kind", async () => {
    const manager = await Manager.create({
      config: { ...quiet, name: "gadgets" },
      kubeConfig: env.cp.kubeConfig,
      env: {},
    });
    manager
      .controller()
      .for({ group: "gadgets.example.com", version: "v1alpha1", kind: "Gadget" })
      .complete(async () => {});
    const stop = new AbortController();
    await assert.rejects(manager.run(stop.signal), (error: Error) => {
      assert.match(error.message, /gadgets\.example\.com/);
      assert.match(error.message, /v1alpha1/);
      assert.match(error.message, /Gadget/);
      return true;
    });
  });
});
