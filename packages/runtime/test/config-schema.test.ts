// The configuration schema is the one source of each setting: its type, its
// default, its description and its variable. These tests fail when the
// schema, the ManagerConfig type, the TESSERA_* names, the defaults loading
// fills and the table in docs/how-to/deploying.md disagree.
import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ConfigError, configEnvironmentVariables, loadConfig, managerConfigSchema } from "../src/config.js";
import type { ControllerConfig, ManagerConfig } from "../src/config.js";
import { derivedDefaults } from "../src/config/config-defaults.js";
import { configSettingsTable, replaceConfigTable } from "../src/config/config-docs-table.js";
import { environmentName } from "../src/config/config-environment.js";
import { requireOperatorName } from "../src/config/require-operator-name.js";
import type { SchemaNode } from "../src/config/schema-node.js";
import { settingSource } from "../src/config/setting-source.js";

/** Every setting (leaf) of the schema with its path; a map's entries' fields under `<name>`. */
function leaves(node: SchemaNode, path: string[] = []): Array<{ path: string[]; node: SchemaNode }> {
  if (node.properties && node.additionalProperties === false) {
    return Object.entries(node.properties).flatMap(([key, child]) => leaves(child, [...path, key]));
  }
  const entry = typeof node.additionalProperties === "object" ? node.additionalProperties : undefined;
  return [{ path, node }, ...(entry ? leaves(entry, [...path, "<name>"]) : [])];
}

const schema: SchemaNode = managerConfigSchema;
const noNamespaceFile = fileURLToPath(new URL("./absent-namespace", import.meta.url));
const at = (object: unknown, path: readonly string[]) =>
  path.reduce<unknown>((value, key) => (value as Record<string, unknown> | undefined)?.[key], object);

describe("the configuration schema", () => {
  it("gives every setting a description and exactly one of default, x-default or x-optional", () => {
    const all = leaves(schema);
    assert.ok(all.length >= 28, `only ${all.length} settings found`);
    for (const { path, node } of all) {
      const where = path.join(".");
      assert.ok((node.description ?? "").length > 10, `${where}: no description`);
      const ways = [node.default !== undefined, node["x-default"] !== undefined, node["x-optional"] === true];
      assert.equal(
        ways.filter(Boolean).length,
        1,
        `${where}: needs exactly one of default, x-default, x-optional`,
      );
    }
  });

  it("computes exactly the defaults it words as x-default", () => {
    const worded = leaves(schema)
      .filter(({ node }) => node["x-default"] !== undefined)
      .map(({ path }) => `/${path.join("/")}`)
      .sort();
    assert.deepEqual(Object.keys(derivedDefaults).sort(), worded);
  });

  it("names one TESSERA_* variable per setting by the documented rule, and loading reads each", () => {
    const variables = configEnvironmentVariables();
    const settings = leaves(schema).filter(({ path }) => !path.includes("<name>"));
    assert.deepEqual([...variables.keys()].sort(), settings.map(({ path }) => environmentName(path)).sort());
    assert.equal(
      environmentName(["leaderElection", "leaseDurationMs"]),
      "TESSERA_LEADER_ELECTION_LEASE_DURATION_MS",
    );
    assert.equal(environmentName(["allowInsecureTLS"]), "TESSERA_ALLOW_INSECURE_TLS");
    for (const name of [
      "TESSERA_NAME",
      "TESSERA_FIELD_MANAGER",
      "TESSERA_KUBECONFIG",
      "TESSERA_CACHE_SYNC_TIMEOUT_MS",
      "TESSERA_CONTROLLERS",
    ]) {
      assert.ok(variables.has(name), `${name} is not a configuration variable`);
    }
    // A value the setting accepts, as a variable: the setting then holds it, set by that variable.
    const sample: Record<string, string> = {
      TESSERA_NAME: "from-env",
      TESSERA_NAMESPACE: "ops",
      TESSERA_IDENTITY: "replica-0",
      TESSERA_FIELD_MANAGER: "manager",
      TESSERA_KUBECONFIG: "/kube/config",
      TESSERA_LEADER_ELECTION_LEASE_NAME: "lease",
      TESSERA_SHARDING_RING: "ring",
      TESSERA_METRICS_CERT_FILE: "/c/tls.crt",
      TESSERA_METRICS_KEY_FILE: "/c/tls.key",
      TESSERA_WEBHOOK_CERT_DIR: "/c/webhook-certs",
      TESSERA_METRICS_SECURE: "true",
      TESSERA_METRICS_BIND_ADDRESS: ":9443",
      TESSERA_METRICS_AUTH: "false",
      TESSERA_CONTROLLERS: '{"widget":{"mode":"sharded"}}',
      TESSERA_CACHE_NAMESPACES: '["team-a","team-b"]',
      TESSERA_CACHE_BY_KIND: '{"secrets":{"namespaces":["team-a"],"labels":"app=web"}}',
      TESSERA_WEBHOOK_CERTIFICATES_SOURCE: "files",
      TESSERA_WEBHOOK_CERTIFICATES_EXTRA_HOSTS: '["127.0.0.1","webhook.local"]',
    };
    for (const [name, { path, node }] of variables) {
      const literal = node.default;
      const fromDefault =
        typeof literal === "string" || typeof literal === "number" || typeof literal === "boolean";
      const raw = sample[name] ?? (fromDefault ? String(literal) : undefined);
      assert.ok(raw !== undefined, `no sample value for ${name}`);
      const env = { ...(name.startsWith("TESSERA_METRICS_") ? sample : {}), [name]: raw };
      if (name === "TESSERA_METRICS_SECURE") delete env["TESSERA_METRICS_CERT_FILE"];
      if (name === "TESSERA_METRICS_SECURE") delete env["TESSERA_METRICS_KEY_FILE"];
      const config = loadConfig({ env, namespaceFile: noNamespaceFile });
      const value = at(config, path);
      assert.equal(
        typeof value === "object" ? JSON.stringify(value) : String(value as string | number | boolean),
        raw,
        name,
      );
      assert.equal(settingSource(config, `/${path.join("/")}`), name);
    }
  });

  it("fills the schema's defaults when nothing is configured", () => {
    const config = loadConfig({ env: {}, namespaceFile: noNamespaceFile });
    for (const { path, node } of leaves(schema)) {
      if (path.includes("<name>")) continue;
      const where = path.join(".");
      const value = at(config, path);
      if (node.default !== undefined) assert.deepEqual(value, node.default, where);
      if (node["x-optional"] === true) assert.equal(value, undefined, where);
      if (node["x-default"] !== undefined) assert.notEqual(value, undefined, where);
      assert.equal(settingSource(config, `/${path.join("/")}`), undefined, `${where} has a source`);
    }
    // The computed ones, as the schema words them.
    assert.equal(config.namespace, "default");
    assert.match(config.identity, /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?-[0-9a-f]{8}$/);
    assert.equal(config.fieldManager, "tessera-operator");
    assert.equal(config.leaderElection.leaseName, "tessera-operator-leader");
    assert.equal(config.sharding.ring, "tessera-operator");
    assert.equal(config.metricsBindAddress, ":8080");
    assert.equal(config.metrics.auth, false);
  });

  it("types ManagerConfig as the schema says", () => {
    // Compile-time: these lines fail to build when the derived type drifts.
    type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
    const checks: Array<true> = [
      true satisfies Equal<ManagerConfig["mode"], "leader" | "sharded" | "every-replica">,
      true satisfies Equal<ManagerConfig["logLevel"], "debug" | "info" | "warn" | "error">,
      true satisfies Equal<ManagerConfig["name"], string>,
      true satisfies Equal<ManagerConfig["sharding"], { ring: string; slots: number }>,
      true satisfies Equal<
        ManagerConfig["leaderElection"],
        { leaseName: string; leaseDurationMs: number; renewDeadlineMs: number; retryPeriodMs: number }
      >,
      true satisfies Equal<
        ManagerConfig["metrics"],
        { secure: boolean; auth: boolean; certFile?: string; keyFile?: string }
      >,
      true satisfies Equal<
        ControllerConfig,
        {
          mode?: "leader" | "sharded" | "every-replica";
          concurrency?: number;
          reconcileTimeoutMs?: number;
          maxIntervalMs?: number;
          maxBackoffMs?: number;
        }
      >,
      true satisfies Equal<Pick<ManagerConfig, "kubeconfig">, { kubeconfig?: string }>,
    ];
    assert.equal(checks.length, 8);
    // Run-time: the leaves a loaded configuration holds are the schema's, no more.
    const config = loadConfig({ config: { name: "widgets" }, env: {}, namespaceFile: noNamespaceFile });
    const held = (value: unknown, path: string[] = []): string[] =>
      // Open maps (controllers, cache.byKind) and lists are leaves: one setting each.
      value !== null &&
      typeof value === "object" &&
      !Array.isArray(value) &&
      path[0] !== "controllers" &&
      path.join(".") !== "cache.byKind"
        ? Object.entries(value).flatMap(([key, child]) => held(child, [...path, key]))
        : [path.join(".")];
    const filled = leaves(schema)
      .filter(({ path, node }) => !path.includes("<name>") && node["x-optional"] !== true)
      .map(({ path }) => path.join("."));
    assert.deepEqual(held(config).sort(), filled.sort());
  });

  it("is what docs/how-to/deploying.md tables (node scripts/config-docs.mjs rewrites it)", () => {
    const page = readFileSync(new URL("../../../../docs/how-to/deploying.md", import.meta.url), "utf8");
    const table = configSettingsTable();
    for (const name of configEnvironmentVariables().keys())
      assert.match(table, new RegExp(`\\| \`${name}\` \\|`));
    assert.equal(
      replaceConfigTable(page, table),
      page,
      "the settings table of docs/how-to/deploying.md is not the schema's: run node scripts/config-docs.mjs",
    );
  });
});

describe("requireOperatorName", () => {
  const load = (env: Record<string, string>, config = {}) =>
    loadConfig({ config, env, namespaceFile: noNamespaceFile });

  it("refuses an unnamed operator with a leader or sharded controller, saying where to set the name", () => {
    for (const mode of ["leader", "sharded"] as const) {
      assert.throws(
        () => requireOperatorName(load({}), [{ name: "widget", mode }]),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError, String(error));
          assert.equal(error.exitCode, 2);
          assert.equal(error.violations[0]!.path, "/name");
          assert.match(error.message, /controller "widget" \((leader|sharded)\)/);
          assert.match(error.message, /Manager\.create\(\{ config: \{ name: /);
          assert.match(error.message, /name: in the config file/);
          assert.match(error.message, /TESSERA_NAME/);
          return true;
        },
      );
    }
  });

  it("accepts a name from code, the environment, or one given even as the default; and every-replica unnamed", () => {
    requireOperatorName(load({}, { name: "widgets" }), [{ name: "widget", mode: "sharded" }]);
    requireOperatorName(load({ TESSERA_NAME: "widgets" }), [{ name: "widget", mode: "leader" }]);
    requireOperatorName(load({}, { name: "tessera-operator" }), [{ name: "widget", mode: "leader" }]);
    requireOperatorName(load({}), [{ name: "widget", mode: "every-replica" }]);
    requireOperatorName(load({}), []);
  });
});
