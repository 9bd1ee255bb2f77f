import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { generateServingCertificates, type CertificateFiles } from "./certificates.js";
import type { ControlPlane } from "./control-plane.js";
import { freePort } from "./free-port.js";

/** A rule of a webhook: which requests the API server sends it (admissionregistration.k8s.io/v1 RuleWithOperations). */
export interface WebhookRule {
  apiGroups: string[];
  apiVersions: string[];
  /** Plurals, e.g. `["widgets"]`. */
  resources: string[];
  operations: ("CREATE" | "UPDATE" | "DELETE" | "CONNECT" | "*")[];
  scope?: "Cluster" | "Namespaced" | "*";
}

/** One webhook served by the test process, in short. */
export interface LocalWebhook {
  /** The path the server serves it at, e.g. `/validate-example-com-v1-widget`. */
  path: string;
  rules: WebhookRule[];
  /** A fully qualified name (three labels at least); default `<path without "/">.tessera.test`. */
  name?: string;
  /** Default `Fail`. */
  failurePolicy?: "Fail" | "Ignore";
  /** Default 10. */
  timeoutSeconds?: number;
  /** Default `None`. */
  sideEffects?: "None" | "NoneOnDryRun";
  namespaceSelector?: Record<string, unknown>;
  objectSelector?: Record<string, unknown>;
}

/** What {@link installWebhooks} registers. */
export interface WebhookInstallOptions {
  /** Mutating webhooks, gathered into one MutatingWebhookConfiguration. */
  mutating?: LocalWebhook[];
  /** Validating webhooks, gathered into one ValidatingWebhookConfiguration. */
  validating?: LocalWebhook[];
  /**
   * Whole Mutating- or ValidatingWebhookConfigurations (as an operator's
   * manifests hold them): each webhook's `clientConfig` is replaced by the
   * local server's URL (keeping its `service.path`) and the test's CA.
   */
  configurations?: Record<string, unknown>[];
  /**
   * CustomResourceDefinitions, by name (`widgets.example.com`), whose
   * conversion goes to the local server: `spec.conversion` becomes a
   * `Webhook` strategy at `path` (default `/convert`).
   */
  conversions?: (string | { crd: string; path?: string })[];
  /** Where the server in the test listens; default `127.0.0.1` (the serving certificate names it). */
  host?: string;
  /** Default a free port. */
  port?: number;
}

/** What {@link installWebhooks} made: where to serve, with which certificate, and how to take it all back. */
export interface InstalledWebhooks {
  readonly host: string;
  readonly port: number;
  /** `host:port`, for a server's bind address. */
  readonly bindAddress: string;
  /** A new directory holding `tls.crt`, `tls.key` (the serving certificate) and `ca.crt`. */
  readonly certDir: string;
  /** The CA the API server trusts for these webhooks. */
  readonly ca: CertificateFiles;
  /** The serving certificate (for 127.0.0.1 and localhost, or `host`) and its key. */
  readonly serving: CertificateFiles;
  /** The configurations created, by kind and name. */
  readonly configurations: readonly { kind: string; name: string }[];
  /** `https://<host>:<port><path>`. */
  url(path: string): string;
  /** Deletes the configurations and turns the CRDs' conversion back to `None`. */
  uninstall(): Promise<void>;
}

const ADMISSION = "/apis/admissionregistration.k8s.io/v1";
const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/**
 * Points the real kube-apiserver of `cp` at webhooks served by the test
 * process, as envtest's `WebhookInstallOptions` does: generates a CA and a
 * serving certificate for `host` (written to `certDir`), chooses a port,
 * and registers Mutating- and ValidatingWebhookConfigurations and CRD
 * conversion settings whose `clientConfig` is
 * `https://<host>:<port><path>` with that CA. Serve there (a manager with
 * `webhookBindAddress: installed.bindAddress` and `webhook.certDir:
 * installed.certDir`) and the API server calls it. The API server picks up
 * new configurations within a second or so: assert with `eventually`.
 *
 * ```ts
 * const webhooks = await installWebhooks(env.cp, {
 *   validating: [
 *     {
 *       path: "/validate-example-com-v1-widget",
 *       rules: [{ apiGroups: ["example.com"], apiVersions: ["v1"], resources: ["widgets"], operations: ["CREATE"] }],
 *     },
 *   ],
 * });
 * // ... serve at webhooks.bindAddress with webhooks.certDir, test, then:
 * await webhooks.uninstall();
 * ```
 */
export async function installWebhooks(
  cp: ControlPlane,
  options: WebhookInstallOptions,
): Promise<InstalledWebhooks> {
  const host = options.host ?? "127.0.0.1";
  const port = options.port ?? (await freePort());
  const { ca, serving } = await generateServingCertificates(
    host === "127.0.0.1" || host === "localhost" ? ["127.0.0.1", "localhost"] : [host],
  );
  const certDir = mkdtempSync(join(tmpdir(), "tessera-webhook-certs-"));
  writeFileSync(join(certDir, "tls.crt"), serving.certPem);
  writeFileSync(join(certDir, "tls.key"), serving.keyPem, { mode: 0o600 });
  writeFileSync(join(certDir, "ca.crt"), ca.certPem);
  const base = `https://${host.includes(":") ? `[${host}]` : host}:${port}`;
  const url = (path: string) => `${base}${path}`;
  const caBundle = Buffer.from(ca.certPem).toString("base64");
  const clientConfig = (path: string) => ({ url: url(path), caBundle });

  const suffix = randomBytes(3).toString("hex");
  const configurations: Record<string, unknown>[] = [];
  const gathered = (kind: string, webhooks: LocalWebhook[] | undefined) => {
    if (!webhooks?.length) return;
    configurations.push({
      apiVersion: "admissionregistration.k8s.io/v1",
      kind,
      metadata: {
        name: `tessera-testenv-${kind.startsWith("Mutating") ? "mutating" : "validating"}-${suffix}`,
      },
      webhooks: webhooks.map((w) => ({
        name: w.name ?? `${w.path.replace(/^\//, "").replace(/[^a-z0-9-]/g, "-")}.tessera.test`,
        clientConfig: clientConfig(w.path),
        rules: w.rules,
        failurePolicy: w.failurePolicy ?? "Fail",
        timeoutSeconds: w.timeoutSeconds ?? 10,
        sideEffects: w.sideEffects ?? "None",
        admissionReviewVersions: ["v1"],
        ...(w.namespaceSelector ? { namespaceSelector: w.namespaceSelector } : {}),
        ...(w.objectSelector ? { objectSelector: w.objectSelector } : {}),
      })),
    });
  };
  gathered("MutatingWebhookConfiguration", options.mutating);
  gathered("ValidatingWebhookConfiguration", options.validating);
  for (const given of options.configurations ?? []) {
    const copy = structuredClone(given) as {
      kind?: string;
      webhooks?: { clientConfig?: { service?: { path?: string }; url?: string; caBundle?: string } }[];
    };
    if (copy.kind !== "MutatingWebhookConfiguration" && copy.kind !== "ValidatingWebhookConfiguration") {
      throw new Error(
        `installWebhooks: configurations hold Mutating- or ValidatingWebhookConfigurations, not ${copy.kind ?? "an object without a kind"}`,
      );
    }
    for (const webhook of copy.webhooks ?? []) {
      webhook.clientConfig = clientConfig(webhook.clientConfig?.service?.path ?? "/");
    }
    configurations.push(copy);
  }

  const created: { kind: string; name: string }[] = [];
  for (const configuration of configurations) {
    const kind = configuration["kind"] as string;
    const name = (configuration["metadata"] as { name: string }).name;
    await apply(cp, `${ADMISSION}/${plural(kind)}/${name}`, configuration, `${kind} ${name}`);
    created.push({ kind, name });
  }
  const conversions = (options.conversions ?? []).map((c) => (typeof c === "string" ? { crd: c } : c));
  for (const { crd, path } of conversions) {
    const res = await cp.raw(`${CRDS}/${crd}`, {
      method: "PATCH",
      headers: { "content-type": "application/merge-patch+json" },
      body: JSON.stringify({
        spec: {
          conversion: {
            strategy: "Webhook",
            // `service: null`: a CRD generated for a cluster names its Service; the API server takes a url or a service, not both.
            webhook: {
              clientConfig: { service: null, ...clientConfig(path ?? "/convert") },
              conversionReviewVersions: ["v1"],
            },
          },
        },
      }),
    });
    if (res.status !== 200) {
      throw new Error(
        `installWebhooks: set the conversion of CustomResourceDefinition ${crd}: HTTP ${res.status}: ${message(res.body)}`,
      );
    }
  }

  return {
    host,
    port,
    bindAddress: `${host.includes(":") ? `[${host}]` : host}:${port}`,
    certDir,
    ca,
    serving,
    configurations: created,
    url,
    async uninstall() {
      for (const { kind, name } of created) {
        const res = await cp.raw(`${ADMISSION}/${plural(kind)}/${name}`, { method: "DELETE" });
        if (res.status !== 200 && res.status !== 404) {
          throw new Error(
            `installWebhooks: delete ${kind} ${name}: HTTP ${res.status}: ${message(res.body)}`,
          );
        }
      }
      for (const { crd } of conversions) {
        const res = await cp.raw(`${CRDS}/${crd}`, {
          method: "PATCH",
          headers: { "content-type": "application/merge-patch+json" },
          body: JSON.stringify({ spec: { conversion: { strategy: "None", webhook: null } } }),
        });
        if (res.status !== 200 && res.status !== 404) {
          throw new Error(
            `installWebhooks: reset the conversion of ${crd}: HTTP ${res.status}: ${message(res.body)}`,
          );
        }
      }
    },
  };
}

async function apply(
  cp: ControlPlane,
  path: string,
  object: Record<string, unknown>,
  what: string,
): Promise<void> {
  const res = await cp.raw(`${path}?fieldManager=tessera-testenv&force=true`, {
    method: "PATCH",
    body: JSON.stringify(object),
    headers: { "content-type": "application/apply-patch+yaml" },
  });
  if (res.status !== 200 && res.status !== 201) {
    throw new Error(`installWebhooks: apply ${what}: HTTP ${res.status}: ${message(res.body)}`);
  }
}

function plural(kind: string): string {
  return `${kind.toLowerCase()}s`;
}

function message(body: string): string {
  try {
    return (JSON.parse(body) as { message?: string }).message ?? body.slice(0, 300);
  } catch {
    return body.slice(0, 300);
  }
}
