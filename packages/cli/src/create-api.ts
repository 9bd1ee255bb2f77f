import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { CliError } from "./cli-error.js";
import { withReconcilerListed } from "./controller-list-edit.js";
import { CONTROLLER_LIST_MODULE } from "./reconciler-classes.js";
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
 * from templates/api, and the reconciler to the list in
 * `src/controllers/index.ts` (the one existing file it changes). Run
 * `tessera generate` next (the CLI does) to get its types, CRD and RBAC.
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
  // Checked before anything is written: a list it cannot add to stops it here.
  const list = withReconcilerListed(dir, `${names.kind}Reconciler`, names.singular);
  const written = renderTemplates(
    join(templatesDir(), "api"),
    dir,
    { ...kindTokens(config.name, options.group, options.version, names), MODE: config.mode },
    new Set([config.mode]),
    false,
  );
  mkdirSync(join(dir, "src/controllers"), { recursive: true });
  writeFileSync(join(dir, CONTROLLER_LIST_MODULE), list);
  return [...written, CONTROLLER_LIST_MODULE];
}
