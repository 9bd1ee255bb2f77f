import type { KubeObject } from "@tessera/client";
import type { Kind } from "../builder/kind.js";

/** The admission operations a validating webhook is called for. */
export type AdmissionOperation = "CREATE" | "UPDATE" | "DELETE";

/**
 * What the API server does when it cannot reach a webhook or the call times
 * out: refuse the request (`Fail`, the default, as kubebuilder's) or let it
 * through unchecked (`Ignore`).
 */
export type FailurePolicy = "Fail" | "Ignore";

/**
 * An admission webhook as declared by its plugin: what the manager serves
 * and what `tessera generate` writes into the operator's
 * MutatingWebhookConfiguration and ValidatingWebhookConfiguration.
 */
export interface AdmissionWebhookDefinition<T extends KubeObject = KubeObject> {
  readonly type: "admission";
  readonly for: Kind<T>;
  /** Set when the plugin defaults (`default()`): the path of its mutating webhook. */
  readonly mutatingPath?: string;
  /** Set when the plugin validates (any `validate*()`): the path of its validating webhook. */
  readonly validatingPath?: string;
  /** The operations the validating webhook is called for: those the plugin has a `validate*()` for. */
  readonly operations: readonly AdmissionOperation[];
  readonly failurePolicy: FailurePolicy;
  /** The API server's timeout for one call, 1 to 30 (default 10); the handler's own deadline is shorter. */
  readonly timeoutSeconds: number;
}

/**
 * A conversion webhook as declared: the hub version and the versions that
 * convert through it (kubebuilder's hub and spokes), served at `path` for
 * the CRD `<plural>.<group>`.
 */
export interface ConversionWebhookDefinition {
  readonly type: "conversion";
  readonly group: string;
  readonly plural: string;
  readonly kind: string;
  readonly hubVersion: string;
  readonly spokeVersions: readonly string[];
  readonly path: string;
}

/** What a webhook plugin declares. */
export type WebhookDefinition = AdmissionWebhookDefinition | ConversionWebhookDefinition;

/** The path of a mutating or validating webhook, as kubebuilder names them: `/mutate-<group with dashes>-<version>-<kind lowercased>`. */
export function admissionWebhookPath(type: "mutate" | "validate", kind: Kind): string {
  const group = kind.group === "" ? "core" : kind.group.replaceAll(".", "-");
  return `/${type}-${group}-${kind.version}-${kind.kind.toLowerCase()}`;
}

/** The path every conversion webhook is served at. */
export const CONVERSION_WEBHOOK_PATH = "/convert";

/**
 * The names of the objects that carry an operator's webhooks, derived from
 * its name, so the manager (which keeps the certificate and injects its CA)
 * and `tessera generate` (which writes the manifests) agree.
 */
export interface WebhookResourceNames {
  /** The Service in front of the webhook server (port 443 to the server's port). */
  readonly service: string;
  /** The Secret that holds the CA and the serving certificate, in the operator's namespace. */
  readonly secret: string;
  readonly mutatingConfiguration: string;
  readonly validatingConfiguration: string;
}

/** The names of an operator's webhook objects (see {@link WebhookResourceNames}). */
export function webhookResourceNames(operatorName: string): WebhookResourceNames {
  return {
    service: `${operatorName}-webhook-service`,
    secret: `${operatorName}-webhook-server-cert`,
    mutatingConfiguration: `${operatorName}-mutating-webhook-configuration`,
    validatingConfiguration: `${operatorName}-validating-webhook-configuration`,
  };
}
