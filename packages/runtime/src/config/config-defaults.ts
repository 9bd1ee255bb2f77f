import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { managerConfigSchema } from "./config-schema.js";
import type { ManagerConfig, ManagerConfigInput } from "./manager-config.js";
import type { SchemaNode } from "./schema-node.js";
import { nodeFs } from "@tessera/core";

/** What a computed default may read besides the configuration. */
export interface DefaultsContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The pod namespace file of the in-cluster service account. */
  readonly namespaceFile: string;
}

/** The configuration with its literal `default`s filled; the computed ones are not yet. */
type Filled = ManagerConfig;

/**
 * The defaults the schema words as `x-default`, by JSON pointer: one
 * function each, computed from the configuration with its literal
 * `default`s filled (none reads another computed one). A test checks that
 * these paths are exactly the schema's `x-default` leaves.
 */
export const derivedDefaults = {
  "/namespace": (_: Filled, { env, namespaceFile }: DefaultsContext) =>
    env["POD_NAMESPACE"] ?? readNamespaceFile(namespaceFile) ?? "default",
  // A pod's name is unique in its namespace; elsewhere two processes on one host must not share an identity.
  // It names Leases, so the host name is made a valid object name (no "_", no capitals).
  "/identity": (_: Filled, { env }: DefaultsContext) =>
    env["POD_NAME"] ?? `${objectNamePart(hostname())}-${randomBytes(4).toString("hex")}`,
  "/fieldManager": (config: Filled) => config.name,
  "/leaderElection/leaseName": (config: Filled) => `${config.name}-leader`,
  "/sharding/ring": (config: Filled) => config.name,
  "/metricsBindAddress": (config: Filled) => (config.metrics.secure ? ":8443" : ":8080"),
  "/metrics/auth": (config: Filled) => config.metrics.secure,
  "/webhook/certificates/source": (config: Filled) =>
    config.webhook.certDir !== undefined ? ("files" as const) : ("secret" as const),
} as const;

/**
 * `input` (valid against the schema) with every absent setting filled: the
 * schema's `default`s first, then its `x-default`s by
 * {@link derivedDefaults}; `x-optional` settings stay absent. A new object:
 * `input` is not changed.
 */
export function applyDefaults(input: ManagerConfigInput, context: DefaultsContext): ManagerConfig {
  const filled = fillLiteral(managerConfigSchema, structuredClone(input)) as Filled;
  for (const [pointer, compute] of Object.entries(derivedDefaults)) {
    const path = pointer.slice(1).split("/");
    let at = filled as unknown as Record<string, unknown>;
    for (const key of path.slice(0, -1)) at = at[key] as Record<string, unknown>;
    const leaf = path[path.length - 1]!;
    if (at[leaf] === undefined) at[leaf] = compute(filled, context);
  }
  return filled;
}

/** `value` with the literal `default` of each absent field of `node` filled, objects of fixed fields made. */
function fillLiteral(node: SchemaNode, value: unknown): unknown {
  if (value === undefined && node.default !== undefined) return structuredClone(node.default);
  if (!node.properties || node.additionalProperties !== false) return value;
  const object = (value ?? {}) as Record<string, unknown>;
  for (const [key, child] of Object.entries(node.properties)) {
    const filled = fillLiteral(child, Object.hasOwn(object, key) ? object[key] : undefined);
    if (filled !== undefined) object[key] = filled;
  }
  return object;
}

/** `text` as part of an object name: lowercase, anything else than a-z, 0-9, '-' and '.' made '-'. */
function objectNamePart(text: string): string {
  const part = text
    .toLowerCase()
    .replace(/[^-a-z0-9.]/g, "-")
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, "")
    .slice(0, 63);
  return part === "" ? "replica" : part;
}

function readNamespaceFile(file: string): string | undefined {
  try {
    const value = nodeFs.readFileSync(file, "utf8").trim();
    return value === "" ? undefined : value;
  } catch {
    return undefined;
  }
}
