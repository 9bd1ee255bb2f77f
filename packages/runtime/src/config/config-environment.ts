import { managerConfigSchema } from "./config-schema.js";
import type { SchemaNode } from "./schema-node.js";

/** `leaseDurationMs` -> `LEASE_DURATION_MS`. */
const snake = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase();

/**
 * The environment variable of the setting at `path`: `TESSERA_`, then each
 * key of the path with a `_` before each capital, upper-cased, the keys
 * joined by `_` (`leaderElection.leaseDurationMs` is
 * `TESSERA_LEADER_ELECTION_LEASE_DURATION_MS`).
 */
export const environmentName = (path: readonly string[]): string => `TESSERA_${path.map(snake).join("_")}`;

/**
 * The environment variables the configuration reads, by name: one per leaf
 * of the schema, named by `environmentName`. A leaf is a setting that
 * is not an object of fixed fields; an object of open keys (`controllers`)
 * is one leaf, its variable (`TESSERA_CONTROLLERS`) holding JSON.
 * `TESSERA_CONFIG`, the file's path, is not a setting and not listed.
 */
export function configEnvironmentVariables(): ReadonlyMap<string, { path: string[]; node: SchemaNode }> {
  const out = new Map<string, { path: string[]; node: SchemaNode }>();
  const walk = (node: SchemaNode, path: string[]) => {
    if (node.properties && node.additionalProperties === false) {
      for (const [key, child] of Object.entries(node.properties)) walk(child, [...path, key]);
      return;
    }
    out.set(environmentName(path), { path, node });
  };
  walk(managerConfigSchema, []);
  return out;
}
