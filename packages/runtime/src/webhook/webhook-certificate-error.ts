import { isForbidden } from "@tessera/client";

/**
 * A read or write of the webhook certificate's objects failed: the Secret,
 * a webhook configuration or a CRD. Says which object and verb, what the
 * operator needs when RBAC refused it, and keeps the API error as its cause.
 */
export class WebhookCertificateError extends Error {
  override name = "WebhookCertificateError";

  constructor(
    /** `get`, `create`, `update`, `patch`. */
    readonly verb: string,
    /** The resource as RBAC names it (`secrets`, `validatingwebhookconfigurations.admissionregistration.k8s.io`). */
    readonly resource: string,
    /** `namespace/name`, or the name of a cluster-scoped object. */
    readonly object: string,
    cause: unknown,
  ) {
    super(
      `webhook certificates: cannot ${verb} ${resource} ${object}: ${cause instanceof Error ? cause.message : String(cause)}` +
        (isForbidden(cause)
          ? `; the operator needs ${verb} on ${resource} (see docs/how-to/webhook-certificates.md, RBAC)`
          : ""),
      { cause },
    );
  }
}
