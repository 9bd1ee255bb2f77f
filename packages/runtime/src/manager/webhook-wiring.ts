import { withFields } from "@tessera/core";
import type { ManagerConfig } from "../config/manager-config.js";
import type { WebhookDeclaration } from "../plugin/plugin-registry.js";
import { Tokens, type Token } from "../plugin/tokens.js";
import { parseBindAddress } from "../server/bind-address.js";
import type { HealthChecks } from "../server/health-checks.js";
import { AdmissionHandler } from "../webhook/admission-handler.js";
import type { Conversion } from "../webhook/conversion.js";
import { Converter } from "../webhook/converter.js";
import { WebhookMetrics } from "../webhook/webhook-metrics.js";
import { WebhookServer } from "../webhook/webhook-server.js";

/** What the webhook server is built from. */
export interface WebhookWiringOptions {
  readonly config: ManagerConfig;
  readonly get: <T>(token: Token<T>) => T;
  readonly webhooks: readonly WebhookDeclaration[];
  readonly conversions: readonly Conversion[];
  readonly health: HealthChecks;
}

/**
 * The webhook server for the registered admission webhooks and
 * conversions, with its readiness check `webhook`; undefined when there are
 * none or `webhookBindAddress` is "0". Throws when two plugins claim one
 * path (two webhooks for one kind) or the certificate source cannot be made.
 */
export function webhookServer(options: WebhookWiringOptions): WebhookServer | undefined {
  const { config, get, webhooks, conversions } = options;
  if (webhooks.length === 0 && conversions.length === 0) return undefined;
  const address = parseBindAddress(config.webhookBindAddress, "webhookBindAddress");
  if (!address) return undefined;
  const logger = withFields(get(Tokens.Logger), { component: "webhook" });
  const clock = get(Tokens.Clock);
  const admission: AdmissionHandler[] = [];
  const paths = new Map<string, string>();
  for (const { definition, plugin } of webhooks) {
    const name = plugin.constructor.name;
    for (const type of ["mutate", "validate"] as const) {
      const path = type === "mutate" ? definition.mutatingPath : definition.validatingPath;
      if (path === undefined) continue;
      const other = paths.get(path);
      if (other !== undefined) {
        throw new TypeError(
          `${name} and ${other} both serve ${path}: one admission webhook plugin per kind (merge their methods)`,
        );
      }
      paths.set(path, name);
      admission.push(new AdmissionHandler({ plugin, definition, type, clock, logger }));
    }
  }
  const server = new WebhookServer({
    address,
    certificates: get(Tokens.WebhookCertificateSource),
    admission,
    ...(conversions.length > 0 ? { converter: new Converter(conversions) } : {}),
    metrics: new WebhookMetrics(get(Tokens.Meter)),
    clock,
    logger,
  });
  options.health.addReadyCheck("webhook", () => server.ready());
  return server;
}
