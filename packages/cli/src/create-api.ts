import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { CliError } from "./cli-error.js";
import { readProjectConfig } from "./project-config.js";
import { checkGroup, checkVersion, kindNames, kindTokens } from "./names.js";
import { renderTemplates, templatesDir } from "./templates.js";

/** What `tessera create api` is asked for. */
export interface CreateApiOptions {
  readonly dir: string;
  readonly kind: string;
  readonly group: string;
  readonly version: string;
  readonly plural?: string;
}

/**
 * Adds a kind to an existing project: its schema, a reconciler and a test,
 * from templates/api. Touches no existing file; run `tessera generate` next
 * (the CLI does) to get its types, CRD, RBAC and the reconciler registered.
 */
export function createApi(options: CreateApiOptions): string[] {
  const dir = resolve(options.dir);
  const config = readProjectConfig(dir);
  checkGroup(options.group);
  checkVersion(options.version);
  const names = kindNames(options.kind, options.plural);
  const schema = join(dir, "schemas", `${names.singular}.schema.json`);
  if (existsSync(schema))
    throw new CliError(`${schema} exists: the project already has a kind ${names.kind}`);
  return renderTemplates(
    join(templatesDir(), "api"),
    dir,
    kindTokens(config.name, options.group, options.version, names),
    new Set([config.mode]),
    false,
  );
}
