import {
  webhookResourceNames,
  type ConversionWebhookDefinition,
  type WebhookDefinition,
} from "@tessera/runtime/codegen";
import { CliError } from "./cli-error.js";
import type { ConversionService } from "./crd.js";
import { versionNames, type ApiKind } from "./kind-versions.js";
import { conversionName } from "./webhook-scaffold.js";
import type { ProjectConfig } from "./project-config.js";

/**
 * The conversion webhook of each kind that has several versions, matched to
 * its schemas by group and plural. Throws a {@link CliError} saying what to
 * write when a kind with several versions has none (the API server would
 * serve each version's objects unconverted), and when a conversion's hub is
 * not the stored version or its spokes are not the other versions.
 */
export function conversionsOf(
  kinds: readonly ApiKind[],
  webhooks: readonly WebhookDefinition[],
): Map<ApiKind, ConversionWebhookDefinition> {
  const found = new Map<ApiKind, ConversionWebhookDefinition>();
  for (const webhook of webhooks) {
    if (webhook.type !== "conversion") continue;
    const crd = `${webhook.plural}.${webhook.group}`;
    const kind = kinds.find((k) => k.names.plural === webhook.plural && k.group === webhook.group);
    if (!kind) {
      throw new CliError(
        `src/webhooks/index.ts lists a conversion for ${crd}, which no schema under schemas/ defines; ` +
          `remove it, or add the kind's schemas`,
      );
    }
    if (found.has(kind))
      throw new CliError(`src/webhooks/index.ts lists two conversions for ${crd}; keep one`);
    const stored = kind.storage.header.version;
    const others = kind.versions.map((v) => v.header.version).filter((v) => v !== stored);
    if (webhook.hubVersion !== stored) {
      throw new CliError(
        `the conversion of ${crd} converts through ${webhook.hubVersion}, but ${stored} is the stored version ` +
          `("storage": true in ${kind.storage.file}); the hub is the stored version: convert through ` +
          `${versionNames(kind, kind.storage).handle} (${stored}), or mark ${webhook.hubVersion} as stored`,
      );
    }
    const missing = others.filter((v) => !webhook.spokeVersions.includes(v));
    const extra = webhook.spokeVersions.filter((v) => !others.includes(v));
    if (missing.length || extra.length) {
      throw new CliError(
        `the conversion of ${crd} does not match its schemas:` +
          (missing.length ? ` no toHub/fromHub for ${missing.join(", ")} (a version under schemas/);` : "") +
          (extra.length ? ` toHub/fromHub for ${extra.join(", ")}, which no schema defines;` : "") +
          ` it needs one entry per version other than the stored ${stored}: ${others.join(", ")}`,
      );
    }
    found.set(kind, webhook);
  }
  for (const kind of kinds) {
    if (kind.versions.length > 1 && !found.has(kind)) throw new CliError(missingConversion(kind));
  }
  return found;
}

/** Where the CRD of a kind with a conversion sends its ConversionReviews. */
export function conversionService(
  config: ProjectConfig,
  webhook: ConversionWebhookDefinition | undefined,
): ConversionService | undefined {
  if (!webhook) return undefined;
  return { namespace: config.namespace, name: webhookResourceNames(config.name).service, path: webhook.path };
}

function missingConversion(kind: ApiKind): string {
  const crd = `${kind.names.plural}.${kind.group}`;
  const hub = versionNames(kind, kind.storage);
  const spokes = kind.versions.filter((v) => v !== kind.storage);
  const versions = kind.versions.map((v) => v.header.version).join(", ");
  const entries = spokes.map((s) => {
    const n = versionNames(kind, s);
    return (
      `    ${s.header.version}: {\n` +
      `      toHub: (from: ${n.type}): ${hub.type} => ({ ...from }),\n` +
      `      fromHub: (hub: ${hub.type}): ${n.type} => ({ ...hub }),\n` +
      `    },\n`
    );
  });
  const name = conversionName(kind);
  return (
    `${crd} has versions ${versions} and no conversion between them: the API server stores ` +
    `${kind.storage.header.version} and would serve it as the others unconverted. ` +
    `Run \`tessera create webhook ${kind.names.kind} --conversion\`, which writes ` +
    `src/webhooks/${kind.names.singular}-conversion.ts and lists it, or write it yourself:\n` +
    `  import { defineConversion } from "@tessera/runtime";\n` +
    `  import { ${hub.handle}, type ${hub.type} } from "../generated/${hub.module}.js";\n` +
    spokes
      .map((s) => versionNames(kind, s))
      .map((n) => `  import type { ${n.type} } from "../generated/${n.module}.js";\n`)
      .join("") +
    `  export const ${name} = defineConversion(${hub.handle}, {\n` +
    entries.join("") +
    `  });\n` +
    `and list it in src/webhooks/index.ts (export const webhooks = [..., ${name}] as const;), ` +
    `registered in src/main.ts (manager.register(...reconcilers).register(...webhooks))`
  );
}
