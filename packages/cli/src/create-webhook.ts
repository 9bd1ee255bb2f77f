import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { findKind } from "./api-version.js";
import { CliError } from "./cli-error.js";
import { listAppended, type ListModule } from "./controller-list-edit.js";
import { hasConversion } from "./create-api.js";
import { readProjectConfig } from "./project-config.js";
import { WEBHOOK_LIST, WEBHOOK_LIST_MODULE } from "./webhook-declarations.js";
import { WEBHOOK_COMPONENT_DIR } from "./webhook-manifests.js";
import {
  admissionPluginModule,
  admissionUnitTest,
  conversionModule,
  conversionName,
  conversionUnitTest,
  webhookClassName,
} from "./webhook-scaffold.js";
import { webhookControlPlaneTest } from "./webhook-test-scaffold.js";

/** What `tessera create webhook` is asked for. */
export interface CreateWebhookOptions {
  readonly dir: string;
  readonly kind: string;
  /** A mutating webhook: `default()`. */
  readonly defaulting?: boolean;
  /** A validating webhook: `validateCreate()` and `validateUpdate()`. */
  readonly validation?: boolean;
  /** The conversion between the kind's versions (it must have several). */
  readonly conversion?: boolean;
}

const WEBHOOK_LIST_OF: ListModule = {
  module: WEBHOOK_LIST_MODULE,
  list: WEBHOOK_LIST,
  header: [
    "// The operator's webhooks, listed once: main.ts registers each one beside the reconcilers,",
    "// and `tessera generate` writes the webhook configurations and the CRDs' conversion from",
    "// what each declares. `tessera create webhook` adds to it.",
  ],
};
const MAIN = "src/main.ts";
const BASE_KUSTOMIZATION = "deploy/base/kustomization.yaml";

/**
 * Adds webhooks for a kind the project has: with `defaulting` and/or
 * `validation`, an admission webhook plugin (`src/webhooks/<kind>.ts`) and
 * its tests (its functions called directly, and behind the real API
 * server); with `conversion`, the conversion between the kind's versions
 * (`src/webhooks/<kind>-conversion.ts`, a `toHub`/`fromHub` pair per version
 * other than the stored one) and its round-trip test. Each is appended to
 * the list in `src/webhooks/index.ts` (written when it is the first);
 * the first webhook also has `src/main.ts` register the list and
 * `deploy/base/kustomization.yaml` take the webhooks' kustomize Component.
 * Everything is checked before anything is written. Run `tessera generate`
 * next (the CLI does).
 */
export function createWebhook(options: CreateWebhookOptions): string[] {
  const dir = resolve(options.dir);
  const config = readProjectConfig(dir);
  const defaulting = !!options.defaulting;
  const validation = !!options.validation;
  const conversion = !!options.conversion;
  if (!defaulting && !validation && !conversion) {
    throw new CliError(
      "say what the webhook does: --defaulting (fill fields in), --validation (refuse objects), --conversion (between the kind's versions); any of them together",
    );
  }
  const kind = findKind(dir, options.kind);
  if (!kind) {
    throw new CliError(
      `the project has no kind ${options.kind} under schemas/: a webhook is for one of its kinds; add it first with \`tessera create api ${options.kind}\``,
    );
  }
  const versions = kind.versions.map((v) => v.header.version);
  if (conversion && versions.length < 2) {
    throw new CliError(
      `${kind.names.kind} has one version (${versions[0]}): there is nothing to convert; ` +
        `add a version first with \`tessera create api ${kind.names.kind} --version <version>\``,
    );
  }
  if (conversion && hasConversion(dir, kind)) {
    throw new CliError(
      `src/webhooks/ already defines the conversion of ${kind.names.kind}; nothing was written`,
    );
  }

  const files = new Map<string, string>();
  const single = kind.names.singular;
  let list = readIfExists(join(dir, WEBHOOK_LIST_MODULE));
  const listed: { name: string; module: string }[] = [];
  if (defaulting || validation) {
    const what = { defaulting, validation };
    files.set(`src/webhooks/${single}.ts`, admissionPluginModule(config.name, kind, what));
    files.set(`test/${single}.webhook.unit.test.ts`, admissionUnitTest(config.name, kind, what));
    const throughApiserver = webhookControlPlaneTest(config.name, kind, what);
    if (throughApiserver !== undefined) files.set(`test/${single}.webhook.test.ts`, throughApiserver);
    listed.push({ name: webhookClassName(kind), module: single });
  }
  if (conversion) {
    files.set(`src/webhooks/${single}-conversion.ts`, conversionModule(kind));
    files.set(`test/${single}-conversion.unit.test.ts`, conversionUnitTest(kind));
    listed.push({ name: conversionName(kind), module: `${single}-conversion` });
  }
  for (const path of files.keys()) {
    if (existsSync(join(dir, path))) {
      throw new CliError(
        `${join(dir, path)} exists; it was not created by this command, so it is left alone (nothing was written)`,
      );
    }
  }
  for (const entry of listed) list = listAppended(list, WEBHOOK_LIST_OF, entry.name, entry.module);
  files.set(WEBHOOK_LIST_MODULE, list!);
  const main = mainRegistering(dir);
  if (main !== undefined) files.set(MAIN, main);
  const kustomization = kustomizationWithComponent(dir);
  if (kustomization !== undefined) files.set(BASE_KUSTOMIZATION, kustomization);

  for (const [path, content] of files) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return [...files.keys()];
}

/**
 * `src/main.ts` registering the webhooks beside the reconcilers, or
 * undefined when it already does. Throws, with the lines to write, when it
 * does not have the template's `manager.register(...reconcilers)`.
 */
function mainRegistering(dir: string): string | undefined {
  const text = readIfExists(join(dir, MAIN));
  if (text !== undefined && /\.\.\.webhooks\b/.test(text)) return undefined;
  const register = /manager\.register\(\.\.\.reconcilers\)/;
  const importLine = `import { ${WEBHOOK_LIST} } from "./webhooks/index.js";`;
  if (text === undefined || !register.test(text)) {
    throw new CliError(
      `${MAIN} has no \`manager.register(...reconcilers)\` to add the webhooks to; nothing was written. ` +
        `Register them yourself:\n  ${importLine}\n  manager.register(...reconcilers).register(...${WEBHOOK_LIST});\nthen run this again.`,
    );
  }
  // Two calls: each list's classes are checked against their own `inject` tokens.
  const registered = text.replace(register, `manager.register(...reconcilers).register(...${WEBHOOK_LIST})`);
  const imports = [...registered.matchAll(/^import\s[^;]*;[^\n]*$/gm)];
  const last = imports[imports.length - 1]!;
  const at = last.index + last[0].length;
  return `${registered.slice(0, at)}\n${importLine}${registered.slice(at)}`;
}

/** `deploy/base/kustomization.yaml` with the webhooks' Component, or undefined when it has it (or there is none). */
function kustomizationWithComponent(dir: string): string | undefined {
  const text = readIfExists(join(dir, BASE_KUSTOMIZATION));
  if (text === undefined) return undefined;
  const component = WEBHOOK_COMPONENT_DIR.split("/").pop()!;
  if (new RegExp(`^\\s*-\\s*${component}\\s*$`, "m").test(text)) return undefined;
  const comment =
    "# The webhooks (their configurations, Service and the Deployment's port), generated by tessera generate.\n";
  if (/^components:\s*$/m.test(text))
    return text.replace(/^components:\s*$/m, `components:\n  - ${component}`);
  return `${text.replace(/\n*$/, "\n")}${comment}components:\n  - ${component}\n`;
}

function readIfExists(path: string): string | undefined {
  return existsSync(path) ? readFileSync(path, "utf8") : undefined;
}
