import { withFields } from "@tessera/core";
import { Tokens, type Token } from "../plugin/tokens.js";
import { CaBundleInjector } from "./ca-bundle-injector.js";
import { SecretCertificateSource } from "./secret-certificate-source.js";
import { webhookResourceNames, type ConversionWebhookDefinition } from "./webhook-definition.js";

/**
 * The {@link SecretCertificateSource} a manager's configuration describes
 * (`webhook.certificates`, with `source: secret`): the Secret
 * `webhookResourceNames(name).secret` in `namespace`, through the API
 * client, with a {@link CaBundleInjector} for the operator's own webhook
 * configurations and the CRDs of `conversions`. `get` resolves the
 * manager's services (`manager.get`, or an inversify context's `get`).
 * Throws a RangeError naming the settings when the durations cannot rotate
 * safely.
 */
export function secretCertificateSource(
  get: <T>(token: Token<T>) => T,
  conversions: readonly ConversionWebhookDefinition[] = [],
): SecretCertificateSource {
  const config = get(Tokens.Config);
  const client = get(Tokens.ApiClient);
  const logger = withFields(get(Tokens.Logger), { component: "webhook-certificates" });
  const names = webhookResourceNames(config.name);
  const { extraHosts, servingValidityMs, caValidityMs, overlapMs, pollIntervalMs } =
    config.webhook.certificates;
  return new SecretCertificateSource({
    client,
    namespace: config.namespace,
    secretName: names.secret,
    serviceName: names.service,
    extraHosts,
    servingValidityMs,
    caValidityMs,
    overlapMs,
    pollIntervalMs,
    clock: get(Tokens.Clock),
    logger,
    injector: new CaBundleInjector({
      client,
      validatingConfiguration: names.validatingConfiguration,
      mutatingConfiguration: names.mutatingConfiguration,
      conversionCrds: [...new Set(conversions.map(({ plural, group }) => `${plural}.${group}`))],
      logger,
    }),
  });
}
