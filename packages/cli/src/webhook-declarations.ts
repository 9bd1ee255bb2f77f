import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { WebhookDefinition } from "@tessera/runtime/codegen";
import { CliError } from "./cli-error.js";
import { findClasses, importStatementIn } from "./reconciler-classes.js";

/** The module where a project lists its webhooks, relative to the project. */
export const WEBHOOK_LIST_MODULE = "src/webhooks/index.ts";
/** The name of the list it exports. */
export const WEBHOOK_LIST = "webhooks";
/** The function of `@tessera/runtime/codegen` that reads one listed webhook's declaration. */
const DEFINITION_FUNCTION = "webhookDefinitionOf";

/**
 * What the compiled project's webhooks declare: the `webhooks` export of
 * `src/webhooks/index.ts` (compiled to dist/), each entry (an admission
 * plugin class, read from its prototype without constructing it, so
 * `webhook(on)` must not read fields; or a `defineConversion(...)`) read by the project's own
 * `@tessera/runtime/codegen`, as the manager reads it, so that what is served
 * and what the manifests register are the same.
 */
export async function readWebhookDeclarations(dir: string): Promise<WebhookDefinition[]> {
  const index = join(dir, "dist", WEBHOOK_LIST_MODULE.replace(/\.ts$/, ".js"));
  if (!existsSync(index)) {
    throw new CliError(
      `${WEBHOOK_LIST_MODULE} did not compile to ${index}: it lists the operator's webhooks, ` +
        `e.g.\n  import { WidgetWebhook } from "./widget.js";\n  export const ${WEBHOOK_LIST} = [WidgetWebhook] as const;`,
      1,
    );
  }
  const require = createRequire(join(dir, "package.json"));
  let runtimePath: string;
  try {
    runtimePath = require.resolve("@tessera/runtime/codegen");
  } catch {
    throw new CliError(`@tessera/runtime is not installed in ${dir}: run npm install first`);
  }
  const runtime = (await import(pathToFileURL(runtimePath).href)) as Record<string, unknown>;
  const definitionOf = runtime[DEFINITION_FUNCTION];
  if (typeof definitionOf !== "function") {
    throw new CliError(
      `the project's @tessera/runtime has no webhooks (no ${DEFINITION_FUNCTION} in @tessera/runtime/codegen): ` +
        `update @tessera/runtime, or remove ${WEBHOOK_LIST_MODULE}`,
    );
  }
  const listed = ((await import(pathToFileURL(index).href)) as Record<string, unknown>)[WEBHOOK_LIST];
  if (!Array.isArray(listed)) {
    throw new CliError(
      `${WEBHOOK_LIST_MODULE} exports no \`${WEBHOOK_LIST}\` array: list the operator's webhook plugins and conversions there, ` +
        `e.g. \`export const ${WEBHOOK_LIST} = [WidgetWebhook] as const;\` (main.ts registers them, generate writes their manifests)`,
      1,
    );
  }
  checkEveryWebhookListed(
    dir,
    (listed as unknown[]).flatMap((e) => (typeof e === "function" ? [(e as { name: string }).name] : [])),
  );
  return (listed as unknown[]).map((entry, i) => {
    const at = `${WEBHOOK_LIST_MODULE}: ${WEBHOOK_LIST}[${i}]`;
    if (entry === undefined) {
      throw new CliError(
        `${at} is undefined (an import that does not resolve, or a cycle through index.ts?)`,
      );
    }
    try {
      // A plugin class is read from its prototype, as reconcilers are: generate constructs nothing.
      const plugin: unknown =
        typeof entry === "function" ? (entry as { prototype: unknown }).prototype : entry;
      return (definitionOf as (plugin: unknown) => WebhookDefinition)(plugin);
    } catch (err) {
      throw new CliError(`${at}: ${(err as Error).message}`);
    }
  });
}

const ADMISSION_METHODS = ["default", "validateCreate", "validateUpdate", "validateDelete"];

/**
 * Throws a {@link CliError} naming each admission webhook plugin class of
 * the project (a class under `src/` with `webhook()` and a `default()` or
 * `validate*()`) that `listed` (the names of the listed classes) leaves out,
 * with its file and the lines that list it: the manager would not serve it
 * and generate would register no configuration for it.
 */
export function checkEveryWebhookListed(dir: string, listed: readonly string[]): void {
  const missing = findClasses(
    dir,
    (members) => members.has("webhook") && ADMISSION_METHODS.some((m) => members.has(m)),
  ).filter((c) => !listed.includes(c.name));
  if (missing.length === 0) return;
  const imports = missing.map((c) => importStatementIn(WEBHOOK_LIST_MODULE, c));
  throw new CliError(
    `${missing.length === 1 ? "a webhook plugin is" : `${missing.length} webhook plugins are`} not listed in ${WEBHOOK_LIST_MODULE}, ` +
      `so the operator would not serve it and generate would register no webhook configuration for it:\n` +
      missing
        .map(
          (c) =>
            `  ${c.file}: class ${c.name} has webhook() and default() or validate*() methods` +
            (c.exported ? "" : ", and its module does not export it (export it)"),
        )
        .join("\n") +
      `\nList it in ${WEBHOOK_LIST_MODULE} (main.ts registers that list: manager.register(...reconcilers).register(...${WEBHOOK_LIST})):\n` +
      imports.map((line) => `  ${line}\n`).join("") +
      `  export const ${WEBHOOK_LIST} = [${[...listed, ...missing.map((c) => c.name)].join(", ")}] as const;\n` +
      `(A class that is not a webhook to serve, such as a base class, can be made abstract instead.)`,
  );
}
