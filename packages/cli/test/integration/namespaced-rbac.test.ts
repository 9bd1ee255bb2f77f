// The RBAC tessera generate derives for a controller whose caches are all
// namespaced, applied to a real API server, is all the operator needs: it
// runs as a ServiceAccount bound by those Roles alone (no ClusterRole).
import { strict as assert } from "node:assert";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigMaps, Secrets, isForbidden, loadKubeConfig } from "@tessera/client";
import { silentLogger } from "@tessera/core";
import { ApiClient, Manager } from "@tessera/runtime";
import { eventually, useControlPlane } from "@tessera/testenv";
import { deriveRules, rbacManifests } from "../../src/index.js";

const json = { "Content-Type": "application/json" };

describe("namespaced RBAC from namespaced caches (real API server)", function () {
  this.timeout(120_000);
  const env = useControlPlane();

  async function post(path: string, body: unknown): Promise<void> {
    const res = await env.cp.raw(path, { method: "POST", headers: json, body: JSON.stringify(body) });
    assert.ok(
      res.status === 201 || res.status === 200,
      `POST ${path}: ${res.status} ${res.body.slice(0, 300)}`,
    );
  }

  it("runs an operator cached in two namespaces with only the generated Roles", async () => {
    const suffix = Math.random().toString(36).slice(2, 7);
    const [operatorNs, a, b, c] = ["op", "team-a", "team-b", "team-c"].map((n) => `${n}-${suffix}`) as [
      string,
      string,
      string,
      string,
    ];
    for (const ns of [operatorNs, a, b, c]) await post("/api/v1/namespaces", { metadata: { name: ns } });
    const name = "mirror";
    const rules = deriveRules(
      [
        {
          name,
          mode: "every-replica",
          for: { group: "", plural: "configmaps", namespaces: [a, b] },
          owns: [{ group: "", plural: "secrets", namespaces: [a, b] }],
          watches: [],
        },
      ],
      { hasStatus: () => false },
    );
    const manifests = rbacManifests(name, operatorNs, rules) as {
      kind: string;
      metadata: { name: string; namespace?: string };
    }[];
    assert.deepEqual(
      manifests.filter((m) => m.kind.startsWith("Cluster")),
      [],
      "no ClusterRole or ClusterRoleBinding",
    );
    await post(`/api/v1/namespaces/${operatorNs}/serviceaccounts`, { metadata: { name } });
    for (const m of manifests) {
      const plural = m.kind === "Role" ? "roles" : "rolebindings";
      await post(`/apis/rbac.authorization.k8s.io/v1/namespaces/${m.metadata.namespace}/${plural}`, m);
    }
    const tokenRes = await env.cp.raw(`/api/v1/namespaces/${operatorNs}/serviceaccounts/${name}/token`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: {} }),
    });
    const token = (JSON.parse(tokenRes.body) as { status: { token: string } }).status.token;
    const file = join(mkdtempSync(join(tmpdir(), "tessera-rbac-")), "kubeconfig.json");
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
        users: [{ name: "u", user: { token } }],
        contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
        "current-context": "x",
      }),
    );
    const asOperator = await loadKubeConfig({ file, env: {} });
    const admin = new ApiClient(env.cp.kubeConfig, { fieldManager: "test" });
    for (const ns of [a, b, c]) {
      await admin.create(ConfigMaps, { metadata: { name: "settings", namespace: ns }, data: { k: ns } });
    }
    // The Roles do not reach past their namespaces: a cluster-wide cache would be refused.
    const operatorClient = new ApiClient(asOperator, { fieldManager: name });
    await assert.rejects(operatorClient.list(ConfigMaps), (e: unknown) => isForbidden(e));
    await assert.rejects(operatorClient.list(ConfigMaps, { namespace: c }), (e: unknown) => isForbidden(e));

    const manager = await Manager.create({
      config: {
        name,
        mode: "every-replica",
        namespace: operatorNs,
        healthBindAddress: "0",
        metricsBindAddress: "0",
        logLevel: "error",
      },
      kubeConfig: asOperator,
      env: {},
      logger: silentLogger,
    });
    manager
      .controller()
      .named(name)
      .for(ConfigMaps, { namespaces: [a, b], fields: { "metadata.name": "settings" } })
      .owns(Secrets, { namespaces: [a, b] })
      .complete(async (request, ctx) => {
        const source = ctx.current();
        if (!source) return;
        await operatorClient.apply(
          Secrets,
          {
            metadata: { name: `${request.name}-copy`, namespace: request.namespace },
            stringData: { k: source.data?.["k"] ?? "" },
          },
          { controller: source, force: true, signal: ctx.signal },
        );
      });
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    try {
      for (const ns of [a, b]) {
        await eventually(
          `the copy in ${ns}`,
          async () => (await admin.get(Secrets, { name: "settings-copy", namespace: ns })) !== undefined,
        );
      }
      assert.equal(await admin.get(Secrets, { name: "settings-copy", namespace: c }), undefined);
    } finally {
      stop.abort();
      await running;
    }
  });
});
