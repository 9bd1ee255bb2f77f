// The lean kubeconfig loader against the real API server: every route it
// serves itself authenticates, and exec users go through client-node.
import { strict as assert } from "node:assert";
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useControlPlane } from "@tessera/testenv";
import {
  ApiClient,
  ConfigMaps,
  KubeConfigError,
  LeanKubeConfig,
  loadKubeConfig,
  type KubeConfigLike,
} from "../../src/index.js";

describe("loadKubeConfig (real API server)", function () {
  this.timeout(60_000);
  const env = useControlPlane();
  const dir = mkdtempSync(join(tmpdir(), "tessera-kubeconfig-"));
  let token = "";

  before(async () => {
    // A service account with a bound token, as a pod would have.
    const cp = env.cp;
    const json = { "Content-Type": "application/json" };
    await cp.raw("/api/v1/namespaces/default/serviceaccounts", {
      method: "POST",
      headers: json,
      body: JSON.stringify({ metadata: { name: "reader" } }),
    });
    await cp.raw("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
      method: "POST",
      headers: json,
      body: JSON.stringify({
        metadata: { name: "reader-admin" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
        subjects: [{ kind: "ServiceAccount", name: "reader", namespace: "default" }],
      }),
    });
    const res = await cp.raw("/api/v1/namespaces/default/serviceaccounts/reader/token", {
      method: "POST",
      headers: json,
      body: JSON.stringify({ apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: {} }),
    });
    token = (JSON.parse(res.body) as { status: { token: string } }).status.token;
  });

  const canList = async (kc: KubeConfigLike) => {
    const client = new ApiClient(kc, { fieldManager: "test" });
    return Array.isArray(await client.list(ConfigMaps, { namespace: "kube-system" }));
  };

  it("serves client certificates and CA data from a kubeconfig file without client-node", async () => {
    const kc = await loadKubeConfig({ file: env.cp.writeKubeconfig(join(dir, "admin.yaml")), env: {} });
    assert.ok(kc instanceof LeanKubeConfig, "fell back to client-node");
    assert.ok(await canList(kc));
  });

  it("serves a bearer token and a token file, and KUBECONFIG wins over in-cluster", async () => {
    const server = env.cp.apiserverUrl;
    const ca = Buffer.from(env.cp.caPem).toString("base64");
    writeFileSync(join(dir, "token"), token);
    for (const user of [{ token }, { tokenFile: "token" }]) {
      const file = join(dir, `sa-${Object.keys(user)[0]}.yaml`);
      writeFileSync(
        file,
        JSON.stringify({
          apiVersion: "v1",
          kind: "Config",
          clusters: [{ name: "c", cluster: { server, "certificate-authority-data": ca } }],
          users: [{ name: "u", user }],
          contexts: [{ name: "x", context: { cluster: "c", user: "u", namespace: "team-a" } }],
          "current-context": "x",
        }),
      );
      const kc = await loadKubeConfig({
        env: { KUBECONFIG: file, KUBERNETES_SERVICE_HOST: "10.0.0.1", KUBERNETES_SERVICE_PORT: "443" },
      });
      assert.ok(kc instanceof LeanKubeConfig);
      assert.equal(kc.namespace, "team-a");
      assert.ok(await canList(kc));
    }
  });

  it("reproduces a pod: token, ca.crt and namespace files with KUBERNETES_SERVICE_*", async () => {
    const sa = join(dir, "serviceaccount");
    mkdirSync(sa, { recursive: true });
    writeFileSync(join(sa, "token"), token);
    writeFileSync(join(sa, "ca.crt"), env.cp.caPem);
    writeFileSync(join(sa, "namespace"), "operators");
    const url = new URL(env.cp.apiserverUrl);
    const kc = await loadKubeConfig({
      env: { KUBERNETES_SERVICE_HOST: url.hostname, KUBERNETES_SERVICE_PORT: url.port },
      serviceAccountDir: sa,
      home: join(dir, "nohome"),
    });
    assert.equal(kc.source, "in-cluster");
    assert.equal(kc.namespace, "operators");
    assert.ok(await canList(kc));
  });

  it("hands exec users to client-node, which runs the plugin", async () => {
    const plugin = join(dir, "credential-plugin.sh");
    writeFileSync(
      plugin,
      `#!/bin/sh\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"${token}"}}'\n`,
    );
    chmodSync(plugin, 0o755);
    const file = join(dir, "exec.yaml");
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
        users: [
          {
            name: "u",
            user: {
              exec: {
                apiVersion: "client.authentication.k8s.io/v1",
                command: plugin,
                interactiveMode: "Never",
              },
            },
          },
        ],
        contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
        "current-context": "x",
      }),
    );
    const kc = await loadKubeConfig({ file, env: {} });
    assert.ok(!(kc instanceof LeanKubeConfig), "an exec user must go through client-node");
    assert.ok(await canList(kc));
  });

  it("says where it looked when there is no cluster", async () => {
    await assert.rejects(
      loadKubeConfig({ env: {}, serviceAccountDir: join(dir, "none"), home: join(dir, "nohome") }),
      (error: unknown) =>
        error instanceof KubeConfigError &&
        /set KUBECONFIG .* service account .*\.kube\/config/.test(error.message),
    );
  });
});
