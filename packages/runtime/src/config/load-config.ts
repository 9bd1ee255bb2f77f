import type { ErrorObject } from "ajv";
import { parseYaml } from "@tessera/client";
import { ConfigError, type ConfigViolation } from "./config-error.js";
import { validateManagerConfig } from "./manager-config-validator.generated.js";
import { applyDefaults } from "./config-defaults.js";
import { configEnvironmentVariables } from "./config-environment.js";
import type { ManagerConfig, ManagerConfigInput } from "./manager-config.js";
import type { SchemaNode } from "./schema-node.js";
import { recordSources } from "./setting-source.js";
import { JITTER_FACTOR } from "@tessera/leader-election";
import { nodeFs } from "@tessera/core";

export { configEnvironmentVariables } from "./config-environment.js";
export type { SchemaNode } from "./schema-node.js";

/** Where {@link loadConfig} reads from; every source is optional. */
export interface LoadConfigOptions {
  /** Configuration in code: the lowest layer. */
  config?: ManagerConfigInput;
  /** A YAML or JSON file (the middle layer); default: `TESSERA_CONFIG` when set. */
  file?: string;
  /** The environment (the top layer, `TESSERA_*`); default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** The pod namespace file of the in-cluster service account, for the default namespace. */
  namespaceFile?: string;
}

const SERVICE_ACCOUNT_NAMESPACE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/**
 * Loads the manager's configuration from code, a file and `TESSERA_*`
 * environment variables, each layer overriding the one before (the
 * environment wins), validates it against the configuration schema (`managerConfigSchema`, compiled at build time) and
 * fills the schema's defaults (`default` and `x-default`). Throws one
 * {@link ConfigError} listing every violation with its source (exit code 2
 * through `runMain`). The configuration it returns remembers which settings
 * code, the file or the environment set (the manager reads that to tell a
 * chosen name from the default).
 */
export function loadConfig(options: LoadConfigOptions = {}): ManagerConfig {
  const env = options.env ?? process.env;
  const violations: ConfigViolation[] = [];
  const origins = new Map<string, string>();
  const merged: JsonObject = {};

  merge(merged, toJson(options.config ?? {}), "code", "", origins);
  const file = options.file ?? env["TESSERA_CONFIG"];
  if (file !== undefined && file !== "") {
    const layer = readConfigFile(file, violations);
    if (layer) merge(merged, layer, file, "", origins);
  }
  for (const [name, { path, node }] of configEnvironmentVariables()) {
    const raw = env[name];
    if (raw === undefined || raw === "") continue;
    const value = fromEnvironment(raw, node);
    if (value === undefined) {
      violations.push({
        path: pointer(path),
        expected: "valid JSON",
        found: JSON.stringify(raw),
        source: name,
      });
      continue;
    }
    const layer: JsonObject = {};
    let at = layer;
    for (const key of path.slice(0, -1)) at = at[key] = {};
    at[path[path.length - 1]!] = value;
    merge(merged, layer, name, "", origins);
  }

  // Compiled at build time (scripts/config-validator.mjs): no ajv at start-up.
  const validate = validateManagerConfig;
  if (!validate(merged)) {
    for (const error of validate.errors ?? []) {
      const violation = describe(error, origins);
      if (violation) violations.push(violation);
    }
  }
  if (violations.length > 0) throw new ConfigError(dedupe(violations));

  const config = applyDefaults(merged, {
    env,
    namespaceFile: options.namespaceFile ?? SERVICE_ACCOUNT_NAMESPACE,
  });
  if (!OBJECT_NAME.test(config.identity)) {
    // Checked here, not by the schema: POD_NAME is read after it.
    violations.push({
      path: "/identity",
      expected:
        "a lowercase RFC 1123 name (a-z, 0-9, '-' and '.', starting and ending with a letter or digit): it names this replica's Leases",
      found: JSON.stringify(config.identity),
      source: origins.get("/identity") ?? (env["POD_NAME"] !== undefined ? "POD_NAME" : "the default"),
    });
  }
  const { leaseDurationMs, renewDeadlineMs, retryPeriodMs } = config.leaderElection;
  if (renewDeadlineMs >= leaseDurationMs) {
    violations.push({
      path: "/leaderElection/renewDeadlineMs",
      expected: `less than leaseDurationMs (${leaseDurationMs})`,
      found: String(renewDeadlineMs),
      source: origins.get("/leaderElection/renewDeadlineMs") ?? "the default",
    });
  }
  // The elector's own rule (client-go's): a renewal may wait up to JITTER_FACTOR retry periods.
  if (renewDeadlineMs <= JITTER_FACTOR * retryPeriodMs) {
    violations.push({
      path: "/leaderElection/retryPeriodMs",
      expected: `at most ${Math.ceil(renewDeadlineMs / JITTER_FACTOR) - 1} (renewDeadlineMs, ${renewDeadlineMs}, must exceed ${JITTER_FACTOR} retry periods)`,
      found: String(retryPeriodMs),
      source: origins.get("/leaderElection/retryPeriodMs") ?? "the default",
    });
  }
  const { certFile, keyFile, secure } = config.metrics;
  if ((certFile === undefined) !== (keyFile === undefined)) {
    const missing = certFile === undefined ? "certFile" : "keyFile";
    violations.push({
      path: `/metrics/${missing}`,
      expected: `set together with ${missing === "certFile" ? "keyFile" : "certFile"} (or neither, for a self-signed certificate)`,
      found: "nothing",
      source: origins.get(`/metrics/${missing === "certFile" ? "keyFile" : "certFile"}`) ?? "code",
    });
  }
  if (certFile !== undefined && !secure) {
    violations.push({
      path: "/metrics/secure",
      expected: "true when metrics.certFile is given (a certificate serves only HTTPS)",
      found: "false",
      source: origins.get("/metrics/secure") ?? "the default",
    });
  }
  if (violations.length > 0) throw new ConfigError(violations);
  recordSources(config, origins);
  return config;
}

/** What Kubernetes accepts as an object name (a DNS subdomain), as far as the identity goes into one. */
const OBJECT_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

function readConfigFile(file: string, violations: ConfigViolation[]): JsonObject | undefined {
  let text: string;
  try {
    text = nodeFs.readFileSync(file, "utf8");
  } catch (error) {
    violations.push({
      path: "",
      expected: "a readable YAML or JSON file",
      found: (error as NodeJS.ErrnoException).code ?? String(error),
      source: file,
    });
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text); // YAML 1.2 is a superset of JSON: one parser for both.
  } catch (error) {
    violations.push({
      path: "",
      expected: "YAML or JSON",
      found: `a syntax error: ${(error as Error).message.split("\n")[0]}`,
      source: file,
    });
    return undefined;
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== "object" || Array.isArray(parsed)) {
    violations.push({
      path: "",
      expected: "a mapping of settings",
      found: JSON.stringify(parsed),
      source: file,
    });
    return undefined;
  }
  return parsed as JsonObject;
}

/** An environment string as the schema's type wants it; undefined for bad JSON. */
function fromEnvironment(raw: string, node: SchemaNode): Json | undefined {
  if (node.type === "integer" || node.type === "number") {
    const trimmed = raw.trim();
    return /^-?\d+(\.\d+)?$/.test(trimmed) ? Number(trimmed) : raw;
  }
  if (node.type === "boolean") {
    const word = raw.trim().toLowerCase();
    return word === "true" ? true : word === "false" ? false : raw;
  }
  if (node.type === "array") {
    // A list as JSON (`["a","b"]`) or comma-separated (`a,b`); empty: the empty list.
    if (raw.trim().startsWith("[")) {
      try {
        return JSON.parse(raw) as Json;
      } catch {
        return undefined;
      }
    }
    return raw
      .split(",")
      .map((v) => v.trim())
      .filter((v) => v !== "");
  }
  if (node.type === "object") {
    try {
      return JSON.parse(raw) as Json;
    } catch {
      return undefined;
    }
  }
  return raw;
}

/** Deep merge of `layer` into `into`; records which source set each leaf. */
function merge(
  into: JsonObject,
  layer: JsonObject,
  source: string,
  base: string,
  origins: Map<string, string>,
) {
  for (const [key, value] of Object.entries(layer)) {
    if (value === undefined) continue;
    const path = `${base}/${key}`;
    // Own properties only, and defined rather than assigned: a `__proto__` key in a file or in
    // TESSERA_CONTROLLERS is then a field like any other (refused as unknown), where `into[key]`
    // would reach Object.prototype and merging into it would change every object in the process.
    const current = Object.hasOwn(into, key) ? into[key] : undefined;
    if (isObject(value) && isObject(current)) {
      merge(current, value, source, path, origins);
    } else {
      Object.defineProperty(into, key, {
        value: isObject(value) ? structuredClone(value) : value,
        writable: true,
        enumerable: true,
        configurable: true,
      });
      for (const known of [...origins.keys()]) if (known.startsWith(`${path}/`)) origins.delete(known);
      origins.set(path, source);
    }
  }
}

const isObject = (value: unknown): value is JsonObject =>
  value !== null && typeof value === "object" && !Array.isArray(value);

function toJson(input: ManagerConfigInput): JsonObject {
  return JSON.parse(JSON.stringify(input)) as JsonObject;
}

const pointer = (path: readonly string[]) => `/${path.join("/")}`;

function sourceOf(path: string, origins: ReadonlyMap<string, string>): string {
  for (let at = path; at !== ""; at = at.slice(0, at.lastIndexOf("/"))) {
    const source = origins.get(at);
    if (source !== undefined) return source;
  }
  return "code";
}

function describe(error: ErrorObject, origins: ReadonlyMap<string, string>): ConfigViolation | undefined {
  const path = error.instancePath;
  const found = JSON.stringify(error.data);
  const params = error.params as Record<string, unknown>;
  const schema = error.parentSchema as SchemaNode | undefined;
  switch (error.keyword) {
    case "additionalProperties": {
      const field = `${path}/${String(params["additionalProperty"])}`;
      const known = Object.keys(schema?.properties ?? {});
      return {
        path: field,
        expected: known.length ? `one of the known fields (${known.join(", ")})` : "no such field",
        found: "an unknown field",
        source: sourceOf(field, origins),
      };
    }
    case "type":
      return { path, expected: `${article(String(params["type"]))}`, found, source: sourceOf(path, origins) };
    case "enum":
      return {
        path,
        expected:
          schema?.["x-expected"] ??
          `one of ${(params["allowedValues"] as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`,
        found,
        source: sourceOf(path, origins),
      };
    case "minimum":
    case "maximum":
      return {
        path,
        expected: `a number ${error.keyword === "minimum" ? ">=" : "<="} ${String(params["limit"])}`,
        found,
        source: sourceOf(path, origins),
      };
    case "pattern":
      return {
        path,
        expected:
          schema?.["x-expected"] ??
          (path.endsWith("BindAddress")
            ? `"host:port", ":port" or "0" (off)`
            : "a lowercase DNS name (letters, digits and '-', starting and ending with a letter or digit)"),
        found,
        source: sourceOf(path, origins),
      };
    case "minLength":
    case "maxLength":
      return {
        path,
        expected: `a string of ${error.keyword === "minLength" ? "at least" : "at most"} ${String(params["limit"])} characters`,
        found,
        source: sourceOf(path, origins),
      };
    default:
      return { path, expected: error.message ?? error.keyword, found, source: sourceOf(path, origins) };
  }
}

const article = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

/** ajv reports a `type` and an `enum` failure for one field at times: keep the first per path. */
function dedupe(violations: readonly ConfigViolation[]): ConfigViolation[] {
  const seen = new Set<string>();
  return violations.filter((v) => (seen.has(v.path) ? false : (seen.add(v.path), true)));
}
