import {
  CustomResourceDefinitions,
  MutatingWebhookConfigurations,
  ValidatingWebhookConfigurations,
  describeResource,
  isConflict,
  type Client,
  type JsonPatchOperation,
  type KubeObject,
  type Resource,
} from "@tessera/client";
import { isoTime, type Logger, toError } from "@tessera/core";
import { BUNDLE_SINCE_ANNOTATION } from "./webhook-certificate-secret.js";
import { WebhookCertificateError } from "./webhook-certificate-error.js";

/** The CA bundle to inject, and when it last changed. */
export interface CaBundle {
  /** PEM certificates, concatenated. */
  readonly pem: string;
  /** When the bundle last changed: an older bundle (a replica that has not read the Secret yet) never replaces a newer one. */
  readonly since: Date;
}

/** Options of a {@link CaBundleInjector}. */
export interface CaBundleInjectorOptions {
  /** Reads and patches: the API client (`Tokens.ApiClient`). */
  client: Client;
  /** The operator's ValidatingWebhookConfiguration (`webhookResourceNames(name).validatingConfiguration`). */
  validatingConfiguration?: string;
  /** The operator's MutatingWebhookConfiguration (`webhookResourceNames(name).mutatingConfiguration`). */
  mutatingConfiguration?: string;
  /** The CRDs the operator converts (`<plural>.<group>`): their `spec.conversion.webhook.clientConfig.caBundle`. */
  conversionCrds?: readonly string[];
  logger: Logger;
}

/** One object the bundle goes into, and where in it. */
interface Target {
  readonly resource: Resource<KubeObject>;
  readonly name: string;
  /** The JSON pointers of its caBundle fields; `undefined`: the object takes no bundle (a CRD without webhook conversion). */
  readonly paths: (object: KubeObject) => string[] | undefined;
}

/**
 * Writes the operator's CA bundle where the API server reads it: every
 * webhook's `clientConfig.caBundle` in the operator's own
 * ValidatingWebhookConfiguration and MutatingWebhookConfiguration, and
 * `spec.conversion.webhook.clientConfig.caBundle` of the CRDs it converts.
 * A JSON patch, only when a bundle differs, with the object's
 * resourceVersion as a precondition, and the bundle's date as an
 * annotation so a replica that has not yet read a rotation does not put
 * the old bundle back. An object that does not exist is skipped with one
 * log line (a project without validating webhooks has no such configuration).
 */
export class CaBundleInjector {
  private readonly targets: readonly Target[];
  /** Objects already logged as missing or taking no bundle: logged once, not at every read. */
  private readonly skipped = new Set<string>();

  constructor(private readonly options: CaBundleInjectorOptions) {
    const webhooks = (object: KubeObject) =>
      ((object as { webhooks?: unknown[] }).webhooks ?? []).map(
        (_, i) => `/webhooks/${i}/clientConfig/caBundle`,
      );
    this.targets = [
      ...(options.validatingConfiguration !== undefined
        ? [
            {
              resource: ValidatingWebhookConfigurations,
              name: options.validatingConfiguration,
              paths: webhooks,
            },
          ]
        : []),
      ...(options.mutatingConfiguration !== undefined
        ? [{ resource: MutatingWebhookConfigurations, name: options.mutatingConfiguration, paths: webhooks }]
        : []),
      ...(options.conversionCrds ?? []).map((name) => ({
        resource: CustomResourceDefinitions,
        name,
        paths: (crd: KubeObject) => {
          const conversion = (
            crd as { spec?: { conversion?: { strategy?: string; webhook?: { clientConfig?: object } } } }
          ).spec?.conversion;
          return conversion?.strategy === "Webhook" && conversion.webhook?.clientConfig !== undefined
            ? ["/spec/conversion/webhook/clientConfig/caBundle"]
            : undefined;
        },
      })),
    ] as Target[];
  }

  /**
   * Writes `bundle` into every target whose bundle differs. Throws a
   * {@link WebhookCertificateError} naming the object for the first read or
   * patch that fails, after trying the others.
   */
  async inject(bundle: CaBundle, signal?: AbortSignal): Promise<void> {
    let failure: Error | undefined;
    for (const target of this.targets) {
      try {
        await this.injectInto(target, bundle, signal);
      } catch (error) {
        failure ??= toError(error);
      }
    }
    if (failure !== undefined) throw failure;
  }

  private async injectInto(target: Target, bundle: CaBundle, signal?: AbortSignal): Promise<void> {
    const { client, logger } = this.options;
    const resource = describeResource(target.resource);
    const caBundle = Buffer.from(bundle.pem).toString("base64");
    // A conflict (the object changed between read and patch) is read again once; a second waits for the next round.
    for (let attempt = 1; attempt <= 2; attempt++) {
      let object: KubeObject | undefined;
      try {
        object = await client.get(target.resource, { name: target.name }, signal ? { signal } : {});
      } catch (error) {
        throw new WebhookCertificateError("get", resource, target.name, error);
      }
      const paths = object && target.paths(object);
      if (!object || !paths) {
        const key = `${resource}/${target.name}`;
        if (!this.skipped.has(key)) {
          this.skipped.add(key);
          logger.info(
            object
              ? `webhook certificates: ${resource} ${target.name} does not convert through a webhook (spec.conversion.strategy); its CA bundle is not injected`
              : `webhook certificates: ${resource} ${target.name} does not exist; its CA bundle is not injected`,
            { resource, name: target.name },
          );
        }
        return;
      }
      this.skipped.delete(`${resource}/${target.name}`);
      const stale = paths.filter((path) => valueAt(object, path) !== caBundle);
      if (stale.length === 0) return;
      const annotations = object.metadata?.annotations;
      const writtenSince = Date.parse(annotations?.[BUNDLE_SINCE_ANNOTATION] ?? "");
      if (writtenSince > bundle.since.getTime()) return; // a newer bundle is in place: this replica is behind
      const since = isoTime(bundle.since);
      const patch: JsonPatchOperation[] = [
        // The resourceVersion read, set in the patch, is a precondition: 409 Conflict if the object changed since.
        { op: "replace", path: "/metadata/resourceVersion", value: object.metadata?.resourceVersion },
        ...stale.map((path) => ({ op: "add" as const, path, value: caBundle })),
        annotations
          ? {
              op: "add",
              path: `/metadata/annotations/${BUNDLE_SINCE_ANNOTATION.replace("/", "~1")}`,
              value: since,
            }
          : { op: "add", path: "/metadata/annotations", value: { [BUNDLE_SINCE_ANNOTATION]: since } },
      ];
      try {
        await client.patch(
          target.resource,
          { name: target.name },
          { type: "json", patch },
          signal ? { signal } : {},
        );
        logger.info(`webhook certificates: CA bundle written into ${resource} ${target.name}`, {
          resource,
          name: target.name,
        });
        return;
      } catch (error) {
        if (isConflict(error)) continue;
        throw new WebhookCertificateError("patch", resource, target.name, error);
      }
    }
  }
}

/** The value at a JSON pointer (no escapes: the pointers here have none). */
function valueAt(object: unknown, pointer: string): unknown {
  let at = object;
  for (const key of pointer.split("/").slice(1)) {
    if (at === null || typeof at !== "object") return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}
