// Every metric name the documentation mentions is one a running operator
// exports: a leader-mode manager and two members of a sharded ring run over
// the real API server, reconcile Widgets (successes, retried errors and
// terminal errors), lose their watches once, and their /metrics endpoints
// are scraped. A name in docs/ or README.md that none of the scrapes holds
// fails the test, listed with the files that mention it.
import { strict as assert } from "node:assert";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { eventually, FaultProxy, kubeConfigVia, parsePrometheusText, useControlPlane } from "@tessera/testenv";
import { Manager, TerminalError, type ManagerConfigInput } from "../../src/index.js";
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
      }
      else if (entry.name.endsWith(".md")) files.push(path);
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
  this.timeout(180_000);
  // Without server-side shard filtering, so that the ring's members filter on the client
  // and count what they drop (tessera_sharding_client_filtered_total).
  const env = useControlPlane({ featureGates: { ShardedListAndWatch: false } });
  const stops: Array<() => Promise<void>> = [];
  before(async () => installWidgetCrd(env.cp));
  after(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  const base: ManagerConfigInput = {
    healthBindAddress: "0",
    metricsBindAddress: "127.0.0.1:0",
    logLevel: "error",
    leaderElection: { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500 },
  };

  /**
   * A manager reconciling the Widgets of `ns` through its own FaultProxy: a
   * Widget named `fail-*` fails once and then succeeds (a retry), one named
   * `terminal-*` throws a TerminalError.
   */
  async function startManager(config: ManagerConfigInput, mode: "leader" | "sharded") {
    const proxy = new FaultProxy(Number(new URL(env.cp.apiserverUrl).port));
    await proxy.start();
    const manager = await Manager.create({
      config: { ...base, ...config },
      kubeConfig: kubeConfigVia(env.cp.kubeConfig, proxy.url),
      env: {},
    });
    const failed = new Set<string>();
    const reconciled = new Set<string>();
    manager
      .controller()
      .for(Widgets)
      .mode(mode)
      .complete(async (request) => {
        if (request.name.startsWith("terminal-")) throw new TerminalError(`${request.name} cannot be done`);
        if (request.name.startsWith("fail-") && !failed.has(request.key)) {
          failed.add(request.key);
          throw new Error(`${request.name} fails once`);
        }
        reconciled.add(request.key);
      });
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    stops.push(async () => {
      stop.abort();
      await running.catch(() => undefined);
      await proxy.stop();
    });
    const { metrics } = await manager.endpoints();
    assert.ok(metrics, "the metrics server is on");
    const scrape = async (): Promise<Set<string>> =>
      exportedNames(await (await fetch(`http://127.0.0.1:${metrics.port}/metrics`)).text());
    return { proxy, reconciled, scrape };
  }

  it("every metric name in docs/ and README.md is in a scrape of a running operator", async () => {
    const documented = documentedMetricNames();
    // The extraction itself: the metrics how-to's table alone names more than forty.
    assert.ok(documented.size >= 40, `only ${documented.size} metric names found in the docs`);

    const leaderNs = await createNamespace(env.cp, "documented-leader");
    const ringNs = await createNamespace(env.cp, "documented-ring");
    const leader = await startManager({ name: "documented-leader", namespace: leaderNs }, "leader");
    const members = [
      await startManager({ name: "documented-ring", namespace: ringNs, identity: "member-a" }, "sharded"),
      await startManager({ name: "documented-ring", namespace: ringNs, identity: "member-b" }, "sharded"),
    ];
    for (const ns of [leaderNs, ringNs]) {
      for (const name of ["ok-1", "ok-2", "ok-3", "ok-4", "fail-1", "terminal-1"])
        await createWidget(env.cp, ns, name, { data: { name } });
    }
    await eventually(
      "the leader reconciled its Widgets",
      () => leader.reconciled.has(`${leaderNs}/ok-4`) && leader.reconciled.has(`${leaderNs}/fail-1`),
      60_000,
    );
    await eventually(
      "the ring reconciled its Widgets",
      () =>
        ["ok-1", "ok-2", "ok-3", "ok-4", "fail-1"].every((name) =>
          members.some((m) => m.reconciled.has(`${ringNs}/${name}`)),
        ),
      60_000,
    );

    // Every watch cut once: the reflectors count the failure and resume.
    for (const m of [leader, ...members]) m.proxy.cutAll();
    await createWidget(env.cp, leaderNs, "after-cut", {});
    await eventually("the leader reconciles after the cut", () => leader.reconciled.has(`${leaderNs}/after-cut`));

    const scraped = new Set<string>();
    for (const m of [leader, ...members]) for (const name of await m.scrape()) scraped.add(name);
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
