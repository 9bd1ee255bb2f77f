import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { addApiVersion, findKind } from "./api-version.js";
import { CliError } from "./cli-error.js";
import { versionNames, type ApiKind } from "./kind-versions.js";
import { withReconcilerListed } from "./controller-list-edit.js";
import { CONTROLLER_LIST_MODULE } from "./reconciler-classes.js";
import { readProjectConfig } from "./project-config.js";
import { checkGroup, checkVersion, kindNames, kindTokens } from "./names.js";
import { renderTemplates, templatesDir } from "./templates.js";

/** What `tessera create api` is asked for. */
export interface CreateApiOptions {
  readonly dir: string;
  readonly kind: string;
  /** Default: the group of the kind, when it exists; else required. */
  readonly group?: string;
  /** Required to add a version to an existing kind; default v1alpha1 for a new kind. */
  readonly version?: string;
  readonly plural?: string;
  /** Make the added version the stored one (the hub); only when adding a version. */
  readonly storage?: boolean;
}

/** What `tessera create api` did. */
export interface CreateApiResult {
  /** Files written, relative to the project. */
  readonly files: string[];
  /** Files renamed, relative to the project. */
  readonly renamed: readonly [string, string][];
  /**
   * Set when a version was added to a kind with no conversion yet: what to
   * run next (generate refuses the kind until it has one).
   */
  readonly needsConversion?: string;
}

/**
 * Adds a kind to an existing project: its schema, a reconciler and a test,
 * from templates/api, and the reconciler to the list in
 * `src/controllers/index.ts` (the one existing file it changes). Run
 * `tessera generate` next (the CLI does) to get its types, CRD and RBAC.
 *
 * For a kind the project has, with `version`: adds that version (see
 * `addApiVersion`); its reconciler stays as it is, on the stored version.
 */
export function createApi(options: CreateApiOptions): CreateApiResult {
  const dir = resolve(options.dir);
  const config = readProjectConfig(dir);
  const existing = findKind(dir, options.kind);
  if (existing) {
    const versions = existing.versions.map((v) => v.header.version).join(", ");
    if (options.version === undefined) {
      throw new CliError(
        `the project already has a kind ${existing.names.kind} (${existing.group}, versions ${versions}); ` +
          `to add a version to it, pass --version (e.g. --version v1)`,
      );
    }
    if (options.group !== undefined && options.group !== existing.group) {
      throw new CliError(
        `${existing.names.kind} is in group ${existing.group}, not ${options.group}: a version is added to the kind's own group (leave out --group)`,
      );
    }
    const added = addApiVersion(dir, existing, options.version, !!options.storage);
    return {
      files: added.files,
      renamed: added.renamed,
      ...(hasConversion(dir, added.kind)
        ? {}
        : {
            needsConversion:
              `${existing.names.kind} now has versions ${added.kind.versions.map((v) => v.header.version).join(", ")}: ` +
              `run \`tessera create webhook ${existing.names.kind} --conversion\` to write their conversion ` +
              `(generate refuses a kind with several versions and no conversion)`,
          }),
    };
  }
  if (options.storage)
    throw new CliError(`--storage is for adding a version to a kind the project has; ${options.kind} is new`);
  if (options.group === undefined)
    throw new CliError("the project has no schema to take the group from; pass --group");
  const version = options.version ?? "v1alpha1";
  checkGroup(options.group);
  checkVersion(version);
  const names = kindNames(options.kind, options.plural);
  const schema = join(dir, "schemas", `${names.singular}.schema.json`);
  if (existsSync(schema))
    throw new CliError(`${schema} exists: the project already has a kind ${names.kind}`);
  // Checked before anything is written: a list it cannot add to stops it here.
  const list = withReconcilerListed(dir, `${names.kind}Reconciler`, names.singular);
  const written = renderTemplates(
    join(templatesDir(), "api"),
    dir,
    { ...kindTokens(config.name, options.group, version, names), MODE: config.mode },
    new Set([config.mode]),
    false,
  );
  mkdirSync(join(dir, "src/controllers"), { recursive: true });
  writeFileSync(join(dir, CONTROLLER_LIST_MODULE), list);
  return { files: [...written, CONTROLLER_LIST_MODULE], renamed: [] };
}

/** Whether a module under src/webhooks/ defines the kind's conversion (`defineConversion(<Handle>, ...)`). */
export function hasConversion(dir: string, kind: ApiKind): boolean {
  const webhooks = join(dir, "src/webhooks");
  if (!existsSync(webhooks)) return false;
  const handle = versionNames(kind, kind.storage).handle;
  const call = new RegExp(`defineConversion\\(\\s*${handle}\\b`);
  return readdirSync(webhooks)
    .filter((f) => f.endsWith(".ts"))
    .some((f) => call.test(readFileSync(join(webhooks, f), "utf8")));
}
