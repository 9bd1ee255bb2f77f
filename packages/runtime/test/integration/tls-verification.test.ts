// TLS verification of the API server is on by default: insecure-skip-tls-verify
// is refused unless allowed (then warned about once), and a cluster without a CA
// is checked against Node's system CAs, never skipped.
import { strict as assert } from "node:assert";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { useControlPlane } from "@tessera/testenv";
import { CapturingLogger } from "@tessera/core/testing";
import {
  ConfigMaps,
  type KubeConfigLike,
  KubeConfigError,
  loadKubeConfig,
  TransportError,
} from "@tessera/client";
import { ApiClient, Manager, Tokens } from "../../src/index.js";

describe("TLS verification (real API server)", function () {
  this.timeout(60_000);
  const env = useControlPlane();
  const dir = mkdtempSync(join(tmpdir(), "tessera-tls-"));

  /** A kubeconfig for the admin user with `cluster` fields of the caller's choosing. */
  function writeConfig(name: string, cluster: Record<string, unknown>): string {
    const admin = env.cp.kubeConfig.getCurrentUser()!;
    const file = join(dir, `${name}.yaml`);
    writeFileSync(
      file,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "dev-cluster", cluster: { server: env.cp.apiserverUrl, ...cluster } }],
        users: [
          {
            name: "admin",
            user: { "client-certificate-data": admin.certData, "client-key-data": admin.keyData },
          },
        ],
        contexts: [{ name: "dev-context", context: { cluster: "dev-cluster", user: "admin" } }],
        "current-context": "dev-context",
      }),
    );
    return file;
  }

  it("refuses insecure-skip-tls-verify, naming the file, context and cluster and how to allow it", async () => {
    const file = writeConfig("insecure", { "insecure-skip-tls-verify": true });
    const names = (error: unknown) =>
      error instanceof KubeConfigError &&
      error.message.includes(file) &&
      error.message.includes('context "dev-context"') &&
      error.message.includes('cluster "dev-cluster"') &&
      error.message.includes("allowInsecureTLS: true") &&
      error.message.includes("TESSERA_ALLOW_INSECURE_TLS=true");
    await assert.rejects(loadKubeConfig({ file, env: {} }), names);
    await assert.rejects(
      Manager.create({
        config: { kubeconfig: file, healthBindAddress: "0", metricsBindAddress: "0" },
        env: {},
      }),
      names,
    );
  });

  it("refuses it through client-node too (a KUBECONFIG list) and in a KubeConfig given in code", async () => {
    const insecure = writeConfig("insecure-merged", { "insecure-skip-tls-verify": true });
    const other = join(dir, "other.yaml");
    writeFileSync(
      other,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "other-cluster", cluster: { server: "https://other.invalid" } }],
        contexts: [{ name: "other-context", context: { cluster: "other-cluster" } }],
      }),
    );
    // client-node merges a KUBECONFIG list from process.env itself.
    const saved = process.env["KUBECONFIG"];
    process.env["KUBECONFIG"] = `${insecure}:${other}`;
    try {
      await assert.rejects(
        loadKubeConfig({ env: { KUBECONFIG: `${insecure}:${other}` } }),
        (error: unknown) =>
          error instanceof KubeConfigError &&
          error.message.includes('context "dev-context"') &&
          error.message.includes("allowInsecureTLS"),
      );
    } finally {
      if (saved === undefined) delete process.env["KUBECONFIG"];
      else process.env["KUBECONFIG"] = saved;
    }
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(insecure);
    const quiet = { healthBindAddress: "0", metricsBindAddress: "0" };
    await assert.rejects(
      Manager.create({ config: quiet, kubeConfig, env: {} }),
      (error: unknown) => error instanceof KubeConfigError && /cluster "dev-cluster"/.test(error.message),
    );
    const logger = new CapturingLogger();
    await Manager.create({ config: { ...quiet, allowInsecureTLS: true }, kubeConfig, env: {}, logger });
    assert.equal(logger.matching(/TLS verification .* is off/, "warn").length, 1);
  });

  it("with allowInsecureTLS connects, and warns exactly once however many clients talk", async () => {
    const file = writeConfig("insecure-allowed", { "insecure-skip-tls-verify": true });
    const logger = new CapturingLogger();
    const manager = await Manager.create({
      config: { kubeconfig: file, allowInsecureTLS: true, healthBindAddress: "0", metricsBindAddress: "0" },
      env: {},
      logger,
    });
    const kubeConfig = manager.container.get<KubeConfigLike>(Tokens.KubeConfig);
    for (let i = 0; i < 3; i++) {
      const client = new ApiClient(kubeConfig, { fieldManager: `tls-${i}` });
      assert.ok(Array.isArray(await client.list(ConfigMaps, { namespace: "kube-system" })));
    }
    const warnings = logger.matching(/TLS verification .* is off/, "warn");
    assert.equal(warnings.length, 1, JSON.stringify(logger.lines));
    assert.equal(warnings[0]!.fields["kubeconfig"], file);
    assert.equal(warnings[0]!.fields["cluster"], "dev-cluster");
  });

  it("the environment allows it too: TESSERA_ALLOW_INSECURE_TLS=true", async () => {
    const file = writeConfig("insecure-env", { "insecure-skip-tls-verify": true });
    const logger = new CapturingLogger();
    await Manager.create({
      config: { kubeconfig: file, healthBindAddress: "0", metricsBindAddress: "0" },
      env: { TESSERA_ALLOW_INSECURE_TLS: "true" },
      logger,
    });
    assert.equal(logger.matching(/TLS verification .* is off/, "warn").length, 1);
  });

  it("a cluster with neither a CA nor insecure-skip is verified against the system CAs, and fails", async () => {
    const kc = await loadKubeConfig({ file: writeConfig("no-ca", {}), env: {} });
    const client = new ApiClient(kc, { fieldManager: "tls" });
    await assert.rejects(
      client.list(ConfigMaps, { namespace: "kube-system" }),
      (error: unknown) =>
        error instanceof TransportError && /certificate|self[- ]signed/i.test(error.message),
    );
  });

  it("the same cluster with its CA connects (the failure above is the missing CA, nothing else)", async () => {
    const ca = Buffer.from(env.cp.caPem).toString("base64");
    const kc = await loadKubeConfig({
      file: writeConfig("with-ca", { "certificate-authority-data": ca }),
      env: {},
    });
    const client = new ApiClient(kc, { fieldManager: "tls" });
    assert.ok(Array.isArray(await client.list(ConfigMaps, { namespace: "kube-system" })));
  });
});
