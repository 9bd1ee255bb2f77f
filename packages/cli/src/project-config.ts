import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CliError } from "./cli-error.js";
import { checkProjectName } from "./names.js";

/** `tessera.json` at a project's root: what `tessera generate` needs beyond the schemas. */
export interface ProjectConfig {
  /** The operator's name: npm package, Deployment, ServiceAccount, RBAC objects. */
  readonly name: string;
  /** The namespace it is deployed to (its Role, Leases and ring live there). */
  readonly namespace: string;
  /** The controllers' default mode. */
  readonly mode: "leader" | "sharded";
}

/** Reads and checks `<dir>/tessera.json`. */
export function readProjectConfig(dir: string): ProjectConfig {
  const file = join(dir, "tessera.json");
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === "ENOENT";
    throw new CliError(
      missing
        ? `${dir} is not a Tessera project: it has no tessera.json (create one with \`tessera new <dir>\`, or run this in the project's root)`
        : `${file}: not readable JSON: ${(err as Error).message}`,
    );
  }
  const c = raw as Partial<ProjectConfig>;
  if (typeof c.name !== "string") throw new CliError(`${file}: "name" must be a string`);
  checkProjectName(c.name);
  if (typeof c.namespace !== "string") throw new CliError(`${file}: "namespace" must be a string`);
  if (c.mode !== "leader" && c.mode !== "sharded") {
    throw new CliError(`${file}: "mode" must be "leader" or "sharded", not ${JSON.stringify(c.mode)}`);
  }
  return { name: c.name, namespace: c.namespace, mode: c.mode };
}
