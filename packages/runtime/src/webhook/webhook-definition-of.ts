import type { AnyAdmissionWebhookPlugin } from "./admission-webhook-plugin.js";
import { isConversion, type Conversion } from "./conversion.js";
import { WebhookBuilder, type WebhookMethods } from "./webhook-builder.js";
import type {
  AdmissionOperation,
  AdmissionWebhookDefinition,
  WebhookDefinition,
} from "./webhook-definition.js";

/** What an admission webhook plugin implements, read from its methods (its prototype's, for a class). */
export function webhookMethodsOf(plugin: object): WebhookMethods {
  const has = (method: string) => typeof (plugin as Record<string, unknown>)[method] === "function";
  const operations: AdmissionOperation[] = [];
  if (has("validateCreate")) operations.push("CREATE");
  if (has("validateUpdate")) operations.push("UPDATE");
  if (has("validateDelete")) operations.push("DELETE");
  return { defaults: has("default"), operations };
}

/**
 * The {@link WebhookDefinition} of a registered webhook: an admission
 * webhook plugin (an instance, or a class's prototype: `webhook(on)` is
 * called on it, so it must not read fields the constructor sets) or a
 * conversion made by `defineConversion`. `tessera generate` calls it on
 * the compiled operator's plugins to write the webhook configurations and
 * the CRD's conversion settings; the manager calls it on the instances it
 * serves, so both agree. Throws a `BuilderError` for a declaration with
 * mistakes, a TypeError for anything else.
 */
export function webhookDefinitionOf(plugin: AnyAdmissionWebhookPlugin | Conversion): WebhookDefinition {
  if (isConversion(plugin)) return plugin.definition;
  return admissionDefinitionOf(plugin);
}

/** The definition of an admission webhook plugin (see {@link webhookDefinitionOf}). */
export function admissionDefinitionOf(plugin: AnyAdmissionWebhookPlugin): AdmissionWebhookDefinition {
  if (typeof plugin?.webhook !== "function") {
    throw new TypeError(
      "not a webhook: an admission webhook plugin has webhook(on) returning on.for(kind); a conversion is made by defineConversion",
    );
  }
  const name = (plugin.constructor as { name?: string } | undefined)?.name || "webhook";
  return (plugin.webhook(new WebhookBuilder()) as WebhookBuilder).build(name, webhookMethodsOf(plugin));
}
