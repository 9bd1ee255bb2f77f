import { isIP } from "node:net";
import { Secrets, isAlreadyExists, isConflict, type Client } from "@tessera/client";
import { sleep, toError, type Clock, type Logger } from "@tessera/core";
import type { V1Secret } from "@kubernetes/client-node";
import type { ServingCertificate } from "../server/serving-certificate.js";
import type { CaBundleInjector } from "./ca-bundle-injector.js";
import type { CertificateSource } from "./certificate-source.js";
import {
  checkRotationOptions,
  planRotation,
  type CertificateRotationOptions,
} from "./certificate-rotation.js";
import {
  applyRotationStep,
  BUNDLE_SINCE_ANNOTATION,
  certificatesOf,
  certificatesSecret,
  PHASE_SINCE_ANNOTATION,
  rotationFacts,
  type WebhookCertificates,
} from "./webhook-certificate-secret.js";
import { WebhookCertificateError } from "./webhook-certificate-error.js";

/** Options of a {@link SecretCertificateSource}. */
export interface SecretCertificateSourceOptions extends Partial<CertificateRotationOptions> {
  /** Reads and writes the Secret: the API client (`Tokens.ApiClient`), never a cache. */
  client: Client;
  /** The operator's namespace, where the Secret and the Service are. */
  namespace: string;
  /** The Secret's name (`webhookResourceNames(name).secret`). */
  secretName: string;
  /** The webhook Service's name: the certificate names `<service>.<namespace>.svc` and `.svc.cluster.local`. */
  serviceName: string;
  /** More host names and IP addresses the certificate names, e.g. `127.0.0.1` for a test. */
  extraHosts?: readonly string[];
  /** How often the Secret is read for another replica's change. Default one minute. */
  pollIntervalMs?: number;
  /** Writes the CA bundle into the webhook configurations and CRDs after each read; none: not injected. */
  injector?: CaBundleInjector;
  /** Waits and dates the certificates. */
  clock: Clock;
  logger: Logger;
}

/** Defaults of the rotation: a serving certificate for a year, a CA for ten, an hour of overlap. */
export const DEFAULT_ROTATION: CertificateRotationOptions = {
  servingValidityMs: 365 * 24 * 3600_000,
  caValidityMs: 10 * 365 * 24 * 3600_000,
  overlapMs: 3600_000,
};

/** A lowercase DNS name (RFC 1123 labels). */
const DNS_NAME = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/;

/** A conflicting write is retried at once this many times before the source waits for its next read. */
const WRITE_ATTEMPTS = 5;

/**
 * The webhook certificate the operator keeps itself, with no cert-manager:
 * a CA and a serving certificate in one Secret in its namespace, shared by
 * every replica. Whichever replica finds no Secret creates it (a create
 * that finds one reads the winner's instead); changes are updates with the
 * resourceVersion read, so two replicas never both write one step; every
 * replica reads the Secret every `pollIntervalMs` and serves what it
 * holds. Rotation (see `planRotation`) renews the serving certificate at
 * two thirds of its life and the CA with an overlap during which both CAs
 * are trusted. With an `injector`, the CA bundle is written where the API
 * server reads it after each read.
 */
export class SecretCertificateSource implements CertificateSource {
  private readonly rotation: CertificateRotationOptions;
  private readonly pollIntervalMs: number;
  private readonly hosts: readonly string[];
  private readonly listeners = new Set<(certificate: ServingCertificate) => void>();
  private served: ServingCertificate | undefined;
  private certificates: WebhookCertificates | undefined;
  private lastProblem: string | undefined = "the Secret not read yet";

  constructor(private readonly options: SecretCertificateSourceOptions) {
    this.rotation = {
      servingValidityMs: options.servingValidityMs ?? DEFAULT_ROTATION.servingValidityMs,
      caValidityMs: options.caValidityMs ?? DEFAULT_ROTATION.caValidityMs,
      overlapMs: options.overlapMs ?? DEFAULT_ROTATION.overlapMs,
    };
    this.pollIntervalMs = options.pollIntervalMs ?? 60_000;
    checkRotationOptions(this.rotation, this.pollIntervalMs);
    const { serviceName, namespace } = options;
    // A name the certificate check could not match (a wildcard, capitals) would be renewed at every read.
    const invalid = (options.extraHosts ?? []).filter((host) => !isIP(host) && !DNS_NAME.test(host));
    if (invalid.length > 0) {
      throw new TypeError(
        `webhook.certificates.extraHosts: ${invalid.map((h) => JSON.stringify(h)).join(", ")} is neither an IP address nor a lowercase DNS name (no wildcards)`,
      );
    }
    this.hosts = [
      ...new Set([
        `${serviceName}.${namespace}.svc`,
        `${serviceName}.${namespace}.svc.cluster.local`,
        ...(options.extraHosts ?? []),
      ]),
    ];
  }

  current(): ServingCertificate | undefined {
    return this.served;
  }

  /** Why no certificate is served yet (the last read or write that failed); undefined once one is. */
  problem(): string | undefined {
    return this.served ? undefined : this.lastProblem;
  }

  /** The CA bundle clients must trust now (PEM), once the Secret was read. */
  caBundle(): string | undefined {
    return this.certificates?.bundle.join("");
  }

  onChange(listener: (certificate: ServingCertificate) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Reads (or creates) the Secret, takes the rotation steps due, serves what
   * it holds, injects the bundle, then waits for the next read or the next
   * step, whichever comes first, until `signal` aborts. A failed read or
   * write is logged and tried again at the next read; it never ends the run.
   */
  async run(signal: AbortSignal): Promise<void> {
    const { clock, logger } = this.options;
    while (!signal.aborted) {
      let waitMs = this.pollIntervalMs;
      try {
        const { certificates, dueAt } = await this.sync(signal);
        this.publish(certificates);
        waitMs = Math.max(0, Math.min(waitMs, dueAt.getTime() - clock.wallTime().getTime()));
        await this.options.injector?.inject(
          { pem: certificates.bundle.join(""), since: certificates.bundleSince },
          signal,
        );
      } catch (error) {
        if (signal.aborted) break;
        this.lastProblem = toError(error).message;
        logger.error(this.lastProblem, { secret: this.secretRef() });
      }
      await sleep(clock, waitMs, signal);
    }
  }

  /** Reads the Secret and writes the steps due until none is; the certificates, and when to look again. */
  private async sync(signal: AbortSignal): Promise<{ certificates: WebhookCertificates; dueAt: Date }> {
    const { clock, logger } = this.options;
    for (let attempt = 1; ; attempt++) {
      const secret = await this.read(signal);
      const held = secret ? certificatesOf(secret) : undefined;
      if (secret && !held) {
        logger.warn("webhook certificates: the Secret holds no usable certificates; replacing them", {
          secret: this.secretRef(),
        });
      }
      const plan = planRotation(held && rotationFacts(held, this.hosts), clock.wallTime(), this.rotation);
      if (plan.step === undefined) return { certificates: held!, dueAt: plan.dueAt };
      if (attempt > WRITE_ATTEMPTS) {
        // Served as read; the step is tried again at the next read.
        if (held)
          return { certificates: held, dueAt: new Date(clock.wallTime().getTime() + this.pollIntervalMs) };
        throw new Error(
          `webhook certificates: the Secret ${this.secretRef()} changed under every one of ${WRITE_ATTEMPTS} writes; trying again at the next read`,
        );
      }
      const next = applyRotationStep(plan.step, held, {
        ...this.rotation,
        clock,
        hosts: this.hosts,
        caName: `${this.options.serviceName}-ca`,
      });
      if (await this.write(secret, next, signal)) {
        logger.info(`webhook certificates: ${plan.step}`, { secret: this.secretRef(), step: plan.step });
      }
    }
  }

  /** The Secret, or undefined when there is none. */
  private async read(signal: AbortSignal): Promise<V1Secret | undefined> {
    const { client, namespace, secretName } = this.options;
    try {
      return await client.get(Secrets, { namespace, name: secretName }, { signal });
    } catch (error) {
      throw new WebhookCertificateError("get", "secrets", this.secretRef(), error);
    }
  }

  /** Creates or updates (with `current`'s resourceVersion) the Secret; false when another replica wrote first. */
  private async write(
    current: V1Secret | undefined,
    certificates: WebhookCertificates,
    signal: AbortSignal,
  ): Promise<boolean> {
    const { client, namespace, secretName } = this.options;
    const desired = certificatesSecret(certificates, namespace, secretName, current?.metadata?.labels ?? {});
    const verb = current ? "update" : "create";
    try {
      if (current) {
        desired.metadata = {
          ...current.metadata,
          annotations: {
            ...withoutKeys(current.metadata?.annotations, [PHASE_SINCE_ANNOTATION, BUNDLE_SINCE_ANNOTATION]),
            ...desired.metadata?.annotations,
          },
          // The precondition: the update fails with a conflict if another replica wrote since the read.
          resourceVersion: current.metadata?.resourceVersion ?? "",
        };
        await client.update(Secrets, desired, { signal });
      } else {
        await client.create(Secrets, desired, { signal });
      }
      return true;
    } catch (error) {
      if (isAlreadyExists(error) || isConflict(error)) {
        this.options.logger.debug(
          `webhook certificates: another replica wrote the Secret first; reading it`,
          {
            secret: this.secretRef(),
          },
        );
        return false;
      }
      throw new WebhookCertificateError(verb, "secrets", this.secretRef(), error);
    }
  }

  /** Serves `certificates`' serving certificate and tells the listeners when it changed. */
  private publish(certificates: WebhookCertificates): void {
    this.certificates = certificates;
    const { serving } = certificates;
    if (this.served?.certPem === serving.certPem && this.served.keyPem === serving.keyPem) return;
    this.served = serving;
    for (const listener of this.listeners) listener(serving);
  }

  private secretRef(): string {
    return `${this.options.namespace}/${this.options.secretName}`;
  }
}

/** `record` without `keys`. */
function withoutKeys(
  record: Readonly<Record<string, string>> | undefined,
  keys: readonly string[],
): Record<string, string> {
  return Object.fromEntries(Object.entries(record ?? {}).filter(([key]) => !keys.includes(key)));
}
