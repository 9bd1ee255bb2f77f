// Every metric name the documentation mentions is one a running operator
// exports. Over the real API server run a leader-mode manager, two members of
// a sharded ring (the second joining later, so slots move) and a manager on
// a server without watch-list (LIST + WATCH); they reconcile Widgets
// (successes, a retried error, a terminal error), map a ConfigMap that throws,
// and the leader is cut off while etcd is compacted (failed renewals, a
// relist). Their /metrics endpoints are scraped; a name in docs/ or
// README.md that no scrape holds fails the test, listed with the files that
// mention it.
import { strict as assert } from "node:assert";
import { request as httpsRequest } from "node:https";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { ConfigMaps } from "@tessera/client";
import {
  eventually,
  FaultProxy,
  kubeConfigVia,
  parsePrometheusText,
  useControlPlane,
  type ControlPlane,
} from "@tessera/testenv";
import { CapturingLogger } from "@tessera/core/testing";
import {
  Admission,
  Manager,
  TerminalError,
  Tokens,
  type ManagerConfigInput,
  type WebhookBuilder,
} from "../../src/index.js";
import { selfSignedCertificate, type CertificateSource } from "../../src/server.js";
import { Widgets } from "./widget.js";
import { createNamespace, createWidget, installWidgetCrd } from "./support/widget-cluster.js";

const repoRoot = fileURLToPath(new URL("../../../../../", import.meta.url));

/**
 * How a metric name is recognised in the docs: any identifier, in prose, in
 * inline code or in a code block, that starts with the prefix of a metric
 * family Tessera exports (`tessera_`, `controller_runtime_`, `workqueue_`,
 * `rest_client_`, `leader_election_`) and is not part of a path or a longer
 * word. A wildcard (`workqueue_*`) is not a name. Names must be written out
 * in full: an abbreviation such as `_slots_moved` is not recognised, so the
 * docs spell every name whole.
 */
const METRIC_NAME =
  /(?<![\w./-])(?:tessera|controller_runtime|workqueue|rest_client|leader_election)_[a-z0-9_]*[a-z0-9](?![\w./-])/g;

/** The Markdown files the check reads: docs/ (recursively, without the generated docs/api) and the README. */
function documentationFiles(): string[] {
  const files = [join(repoRoot, "README.md")];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      // docs/api is the API reference typedoc generates from the TSDoc, not written docs.
      if (entry.isDirectory()) {
        if (path !== join(repoRoot, "docs", "api")) walk(path);
      } else if (entry.name.endsWith(".md")) files.push(path);
    }
  };
  walk(join(repoRoot, "docs"));
  return files;
}

/** Each documented metric name with the files (relative to the repository) that mention it. */
function documentedMetricNames(): Map<string, Set<string>> {
  const names = new Map<string, Set<string>>();
  for (const file of documentationFiles()) {
    for (const [name] of readFileSync(file, "utf8").matchAll(METRIC_NAME)) {
      const where = names.get(name) ?? new Set<string>();
      where.add(relative(repoRoot, file));
      names.set(name, where);
    }
  }
  return names;
}

/** The series names a scrape can answer to: each family, and a histogram's `_bucket`, `_sum` and `_count`. */
function exportedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const [name, family] of parsePrometheusText(text)) {
    names.add(name);
    if (family.type === "histogram") for (const s of ["_bucket", "_sum", "_count"]) names.add(name + s);
  }
  return names;
}

describe("documented metric names (real API server)", function () {
  this.timeout(300_000);
  // Without server-side shard filtering, so that the ring's members filter on the client
  // and count what they drop (tessera_sharding_client_filtered_total).
  const env = useControlPlane({ featureGates: { ShardedListAndWatch: false } });
  // A server without watch-list: the reflectors fall back to LIST + WATCH (the LIST metrics).
  const noWatchList = useControlPlane({ featureGates: { WatchList: false } });
  const stops: Array<() => Promise<void>> = [];
  before(async () => {
    await installWidgetCrd(env.cp);
    await installWidgetCrd(noWatchList.cp);
  });
  after(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  const base: ManagerConfigInput = {
    healthBindAddress: "0",
    metricsBindAddress: "127.0.0.1:0",
    logLevel: "error",
    // Long enough for every Lease (the leader's, the ring members', the coordinators') to
    // outlast the faults below and a loaded machine: no manager stops before it is scraped.
    leaderElection: { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 500 },
  };

  /**
   * A manager reconciling Widgets through its own FaultProxy: a Widget named
   * `fail-*` fails once and then succeeds (a retry), one named `terminal-*`
   * throws a TerminalError. It also watches ConfigMaps with a mapping that
   * throws for one named `unmappable` (an informer handler error).
   */
  async function startManager(cp: ControlPlane, config: ManagerConfigInput, mode: "leader" | "sharded") {
    const proxy = new FaultProxy(Number(new URL(cp.apiserverUrl).port));
    await proxy.start();
    const manager = await Manager.create({
      config: { ...base, ...config },
      kubeConfig: kubeConfigVia(cp.kubeConfig, proxy.url),
      env: {},
    });
    // The failures below are meant: their error lines stay out of the test output.
    manager.rebind(Tokens.Logger, new CapturingLogger());
    const failed = new Set<string>();
    const reconciled = new Set<string>();
    manager
      .controller()
      .for(Widgets)
      .watches(ConfigMaps, (configMap) => {
        if (configMap.metadata?.name === "unmappable") throw new Error("this ConfigMap cannot be mapped");
        return [];
      })
      .mode(mode)
      .complete((request) => {
        const key = `${request.namespace}/${request.name}`;
        if (request.name.startsWith("terminal-"))
          return Promise.reject(new TerminalError(`${request.name} cannot be done`));
        if (request.name.startsWith("fail-") && !failed.has(key)) {
          failed.add(key);
          return Promise.reject(new Error(`${request.name} fails once`));
        }
        reconciled.add(key);
        return Promise.resolve();
      });
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    let stopped: string | undefined;
    running.then(
      () => (stopped = "the run ended"),
      (err: unknown) => (stopped = err instanceof Error ? err.message : "the run failed"),
    );
    stops.push(async () => {
      stop.abort();
      await running.catch(() => undefined);
      await proxy.stop();
    });
    const { metrics } = await manager.endpoints();
    assert.ok(metrics, "the metrics server is on");
    const scrape = async (): Promise<Set<string>> => {
      try {
        return exportedNames(await (await fetch(`http://127.0.0.1:${metrics.port}/metrics`)).text());
      } catch (err) {
        const why = stopped === undefined ? "" : ` (its manager stopped: ${stopped})`;
        throw new Error(`the /metrics of ${config.name}/${config.identity ?? mode} did not answer${why}`, {
          cause: err,
        });
      }
    };
    return { proxy, reconciled, scrape };
  }

  async function createObjects(cp: ControlPlane, ns: string): Promise<void> {
    for (const name of WIDGETS) await createWidget(cp, ns, name, { data: { name } });
    const res = await cp.raw(`/api/v1/namespaces/${ns}/configmaps`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "unmappable" } }),
    });
    assert.equal(res.status, 201, res.body);
  }

  /** A validating webhook for Widgets, to be called once (by the test, not the API server). */
  class WidgetWebhook {
    webhook(on: WebhookBuilder) {
      return on.for(Widgets);
    }
    validateCreate() {
      return Admission.allow();
    }
  }

  /**
   * A manager serving WidgetWebhook with a self-signed certificate, called
   * once with an AdmissionReview so that every webhook series exists.
   */
  async function startWebhookManager(cp: ControlPlane) {
    const manager = await Manager.create({
      config: { ...base, mode: "every-replica", webhookBindAddress: "127.0.0.1:0" },
      kubeConfig: cp.kubeConfig,
      env: {},
    });
    const certificate = selfSignedCertificate({ hosts: ["127.0.0.1"], clock: manager.get(Tokens.Clock) });
    const source: CertificateSource = {
      current: () => certificate,
      onChange: () => () => {},
      run: (signal) =>
        new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true })),
    };
    manager.rebind(Tokens.WebhookCertificateSource, source).register(WidgetWebhook);
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    stops.push(async () => {
      stop.abort();
      await running.catch(() => undefined);
    });
    const { metrics, webhook } = await manager.endpoints();
    const review = JSON.stringify({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      request: {
        uid: "documented",
        kind: { group: "example.com", version: "v1", kind: "Widget" },
        resource: { group: "example.com", version: "v1", resource: "widgets" },
        operation: "CREATE",
        userInfo: {},
        object: { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w" } },
      },
    });
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpsRequest(
        {
          host: "127.0.0.1",
          port: webhook!.port,
          path: "/validate-example-com-v1-widget",
          method: "POST",
          ca: certificate.certPem,
          headers: { "content-type": "application/json" },
        },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        },
      );
      req.on("error", reject);
      req.end(review);
    });
    assert.equal(status, 200);
    return {
      scrape: async () =>
        exportedNames(await (await fetch(`http://127.0.0.1:${metrics!.port}/metrics`)).text()),
    };
  }

  const WIDGETS = ["ok-1", "ok-2", "ok-3", "ok-4", "fail-1", "terminal-1"];
  const allReconciled = (ns: string, ...managers: Array<{ reconciled: Set<string> }>) =>
    WIDGETS.filter((name) => !name.startsWith("terminal-")).every((name) =>
      managers.some((m) => m.reconciled.has(`${ns}/${name}`)),
    );

  it("every metric name in docs/ and README.md is in a scrape of a running operator", async () => {
    const documented = documentedMetricNames();
    // The extraction itself: the metrics how-to's table alone names more than forty.
    assert.ok(documented.size >= 40, `only ${documented.size} metric names found in the docs`);
    const scraped = new Set<string>();
    const collect = async (m: { scrape: () => Promise<Set<string>> }) => {
      for (const name of await m.scrape()) scraped.add(name);
    };

    const leaderNs = await createNamespace(env.cp, "documented-leader");
    const ringNs = await createNamespace(env.cp, "documented-ring");
    const listNs = await createNamespace(noWatchList.cp, "documented-list");
    // Objects first: a ring member's shardSelector probe needs one to tell by.
    for (const ns of [leaderNs, ringNs]) await createObjects(env.cp, ns);
    await createObjects(noWatchList.cp, listNs);

    // The leader keeps its Lease through the API server's restart below, however long a loaded
    // machine makes it: renewals fail (counted) and succeed again within the renew deadline.
    const leader = await startManager(
      env.cp,
      {
        name: "documented-leader",
        namespace: leaderNs,
        leaderElection: { leaseDurationMs: 90_000, renewDeadlineMs: 60_000, retryPeriodMs: 500 },
      },
      "leader",
    );
    const lister = await startManager(
      noWatchList.cp,
      { name: "documented-list", namespace: listNs },
      "leader",
    );
    const memberA = await startManager(
      env.cp,
      { name: "documented-ring", namespace: ringNs, identity: "member-a" },
      "sharded",
    );
    await eventually("the leader reconciled its Widgets", () => allReconciled(leaderNs, leader), 60_000);
    await eventually(
      "the LIST + WATCH manager reconciled its Widgets",
      () => allReconciled(listNs, lister),
      60_000,
    );
    await eventually(
      "member-a, alone, reconciled the ring's Widgets",
      () => allReconciled(ringNs, memberA),
      60_000,
    );
    // A second member: slots move from member-a to it.
    const memberB = await startManager(
      env.cp,
      { name: "documented-ring", namespace: ringNs, identity: "member-b" },
      "sharded",
    );
    await eventually(
      "slots moved to member-b; both members probed the server's filtering and dropped others' objects",
      async () => {
        const [a, b] = [await memberA.scrape(), await memberB.scrape()];
        const either = (name: string) => a.has(name) || b.has(name);
        return (
          either("tessera_sharding_slots_moved_total") &&
          either("tessera_sharding_client_filtered_total") &&
          a.has("tessera_sharding_server_filtering") &&
          b.has("tessera_sharding_server_filtering")
        );
      },
      60_000,
    );
    for (const m of [memberA, memberB, lister]) await collect(m);

    // The leader disconnected while its Widgets change and etcd forgets the history (the API
    // server restarts): renewals fail, watches fail, and the resumed watch's 410 relists.
    leader.proxy.refuse(true);
    leader.proxy.cutAll();
    await createWidget(env.cp, leaderNs, "after-cut", {});
    await env.cp.compact();
    leader.proxy.refuse(false);
    await eventually(
      "the leader relisted, counted its failed renewals, and reconciles again",
      async () => {
        const names = await leader.scrape();
        return (
          names.has("tessera_reflector_relists_total") &&
          names.has("leader_election_renew_failures_total") &&
          leader.reconciled.has(`${leaderNs}/after-cut`)
        );
      },
      90_000,
    );
    await collect(leader);

    await collect(await startWebhookManager(env.cp));

    const missing = [...documented.keys()].filter((name) => !scraped.has(name)).sort();
    assert.deepEqual(
      missing,
      [],
      `documented metric names that no scrape holds:\n${missing
        .map((name) => `  ${name} (${[...(documented.get(name) ?? [])].sort().join(", ")})`)
        .join("\n")}`,
    );
  });
});
