// The RBAC tessera generate derives for a controller that manages a finalizer,
// applied to a real API server: with it the operator, as its own
// ServiceAccount, adds the finalizer and removes it after cleanup; without any
// one of the verbs the finalizer path uses, it fails naming the permission.
import { strict as assert } from "node:assert";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigMaps, loadKubeConfig, type KubeConfigLike } from "@tessera/client";
import { CapturingLogger } from "@tessera/core/testing";
import { CleanupResult, Manager } from "@tessera/runtime";
import { ControllerBuilder } from "@tessera/runtime/codegen";
import { eventually, useControlPlane, type ControlPlane } from "@tessera/testenv";
import { deriveRules, type PolicyRule } from "../../src/index.js";

const json = { "Content-Type": "application/json" };
const FINALIZER = "example.com/release";
const LABELS = { "example.com/finalized": "true" };

describe("the derived RBAC of a managed finalizer (real API server)", function () {
  this.timeout(180_000);
  const env = useControlPlane();
  const name = "keeper";
  const operatorNs = `op-${Math.random().toString(36).slice(2, 7)}`;
  let asOperator: KubeConfigLike;
  let rules: PolicyRule[];
  let round = 0;

  const declare = (on: ControllerBuilder) =>
    on.named(name).for(ConfigMaps, { labels: LABELS }).finalizer(FINALIZER).mode("every-replica");

  before(async () => {
    const definition = declare(new ControllerBuilder()).build();
    rules = deriveRules(
      [
        {
          name: definition.name,
          mode: "every-replica",
          for: { group: "", plural: "configmaps" },
          owns: [],
          watches: [],
          ...(definition.finalizer ? { finalizer: definition.finalizer } : {}),
        },
      ],
      { hasStatus: () => false },
    ).cluster;
    await admin(env.cp, "POST", "/api/v1/namespaces", { metadata: { name: operatorNs } });
    await admin(env.cp, "POST", `/api/v1/namespaces/${operatorNs}/serviceaccounts`, { metadata: { name } });
    await applyClusterRole(env.cp, name, rules);
    await admin(env.cp, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
      metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
      subjects: [{ kind: "ServiceAccount", name, namespace: operatorNs }],
    });
    const token = (await admin(
      env.cp,
      "POST",
      `/api/v1/namespaces/${operatorNs}/serviceaccounts/${name}/token`,
      {
        spec: { expirationSeconds: 3600 },
      },
    )) as { status: { token: string } };
    const file = join(mkdtempSync(join(tmpdir(), "tessera-finalizer-rbac-")), "kubeconfig.json");
    writeFileSync(
      file,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [
          {
            name: "c",
            cluster: {
              server: env.cp.apiserverUrl,
              "certificate-authority-data": Buffer.from(env.cp.caPem).toString("base64"),
            },
          },
        ],
        users: [{ name: "u", user: { token: token.status.token } }],
        contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
        "current-context": "x",
      }),
    );
    asOperator = await loadKubeConfig({ file, env: {} });
  });

  /** Runs the operator as its ServiceAccount; its log lines are captured. */
  async function startOperator() {
    const logger = new CapturingLogger();
    const manager = await Manager.create({
      config: {
        name,
        mode: "every-replica",
        namespace: operatorNs,
        healthBindAddress: "0",
        metricsBindAddress: "0",
      },
      kubeConfig: asOperator,
      env: {},
      logger,
    });
    let cleanups = 0;
    manager.register(
      class Keeper {
        controller(on: ControllerBuilder) {
          return declare(on);
        }
        reconcile() {}
        cleanup() {
          cleanups++;
          return CleanupResult.done;
        }
      },
    );
    const stop = new AbortController();
    const running = manager
      .run(stop.signal)
      .catch((error: unknown) => logger.error("run failed", { error: String(error) }));
    return {
      // Errors in fields by their message (JSON.stringify writes an Error as {}).
      log: () =>
        JSON.stringify(logger.lines, (_key, value: unknown) =>
          value instanceof Error
            ? `${value.message}${value.cause instanceof Error ? ` (${value.cause.message})` : ""}`
            : value,
        ),
      cleanups: () => cleanups,
      stop: async () => {
        stop.abort();
        await running;
      },
    };
  }

  const configMapPath = (ns: string, cm?: string) =>
    `/api/v1/namespaces/${ns}/configmaps${cm ? `/${cm}` : ""}`;
  async function createConfigMap(): Promise<{ ns: string; cm: string }> {
    const ns = `data-${++round}-${Math.random().toString(36).slice(2, 6)}`;
    await admin(env.cp, "POST", "/api/v1/namespaces", { metadata: { name: ns } });
    await admin(env.cp, "POST", configMapPath(ns), {
      metadata: { name: "settings", labels: LABELS },
      data: {},
    });
    return { ns, cm: "settings" };
  }
  const finalizersOf = async (ns: string, cm: string) => {
    const res = await env.cp.raw(configMapPath(ns, cm));
    if (res.status === 404) return undefined;
    return (JSON.parse(res.body) as { metadata: { finalizers?: string[] } }).metadata.finalizers ?? [];
  };

  it("is enough: the finalizer is added, and removed after cleanup once the ConfigMap is deleted", async () => {
    const operator = await startOperator();
    try {
      const { ns, cm } = await createConfigMap();
      await eventually(
        `the finalizer is added (operator said: ${operator.log().slice(-1500)})`,
        async () => (await finalizersOf(ns, cm))?.includes(FINALIZER) === true,
      );
      await admin(env.cp, "DELETE", configMapPath(ns, cm));
      await eventually("the ConfigMap is gone", async () => (await finalizersOf(ns, cm)) === undefined);
      assert.equal(operator.cleanups(), 1);
      assert.doesNotMatch(operator.log(), /forbidden/i);
    } finally {
      await operator.stop();
    }
  });

  it("is no more: without any one verb the finalizer path uses, it fails naming the permission", async () => {
    const primary = rules.find((r) => r.apiGroups[0] === "" && r.resources.includes("configmaps"))!;
    assert.deepEqual(primary.verbs, ["get", "list", "patch", "watch"], "patch derived from finalizer()");
    // The cache streams its list through a watch (watch-list) here: list is for the LIST+WATCH
    // fallback of older servers, get for reads beside the cache. patch is what finalizer() adds.
    for (const verb of ["watch", "patch"]) {
      const without = rules.map((r) =>
        r === primary ? { ...r, verbs: r.verbs.filter((v) => v !== verb) } : r,
      );
      await applyClusterRole(env.cp, name, without);
      const operator = await startOperator();
      try {
        const { ns, cm } = await createConfigMap();
        const named = new RegExp(`cannot ${verb} resource \\\\"configmaps\\\\"`);
        await eventually(
          `without ${verb}, an error naming it`,
          () => named.test(operator.log()),
          30_000,
        ).catch((error: unknown) => {
          throw new Error(`${String(error)}; the operator said: ${operator.log().slice(-3000)}`);
        });
        console.log(
          `      without ${verb} on configmaps: ${/cannot \w+ resource[^,]*?configmaps/.exec(operator.log())?.[0]}`,
        );
        assert.equal(operator.cleanups(), 0);
        if (verb === "patch") assert.deepEqual(await finalizersOf(ns, cm), [], "no finalizer without patch");
      } finally {
        await operator.stop();
        await applyClusterRole(env.cp, name, rules);
      }
    }
  });
});

/** A request as the admin user; throws on a status other than 2xx. */
async function admin(cp: ControlPlane, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await cp.raw(path, {
    method,
    headers: json,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (res.status < 200 || res.status > 299)
    throw new Error(`${method} ${path}: HTTP ${res.status}: ${res.body}`);
  return JSON.parse(res.body);
}

/** Server-side applies the ClusterRole `name` with `rules`, as the admin. */
async function applyClusterRole(cp: ControlPlane, name: string, rules: readonly PolicyRule[]): Promise<void> {
  const res = await cp.raw(
    `/apis/rbac.authorization.k8s.io/v1/clusterroles/${name}?fieldManager=test&force=true`,
    {
      method: "PATCH",
      headers: { "content-type": "application/apply-patch+yaml" },
      body: JSON.stringify({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name },
        rules,
      }),
    },
  );
  if (res.status !== 200 && res.status !== 201)
    throw new Error(`apply ClusterRole ${name}: HTTP ${res.status}: ${res.body}`);
}
