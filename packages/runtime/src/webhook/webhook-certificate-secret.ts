import { X509Certificate } from "node:crypto";
import { isIP } from "node:net";
import type { Clock } from "@tessera/core";
import type { V1Secret } from "@kubernetes/client-node";
import { certificateAuthority, signedCertificate } from "../server/self-signed-certificate.js";
import type { ServingCertificate } from "../server/serving-certificate.js";
import type { CertificateRotationOptions, RotationFacts, RotationStep } from "./certificate-rotation.js";
import { isoTime } from "@tessera/core";

/**
 * What the operator's certificate Secret holds: the CA that signs, the CA
 * that will (during a rotation), the CAs clients trust, and the serving
 * certificate.
 */
export interface WebhookCertificates {
  readonly signer: ServingCertificate;
  readonly next?: ServingCertificate;
  /** The CA certificates clients trust (PEM, one each): the signer, and during a rotation the other CA. */
  readonly bundle: readonly string[];
  readonly serving: ServingCertificate;
  /** When the step of a CA rotation under way was taken. */
  readonly phaseSince?: Date;
  /** When `bundle` last changed: the CA-bundle injector never writes a bundle older than the one in place. */
  readonly bundleSince: Date;
}

/** The Secret's keys: `tls.crt`, `tls.key` and `ca.crt` as cert-manager writes them, and the CAs' own. */
export const SECRET_KEYS = {
  servingCert: "tls.crt",
  servingKey: "tls.key",
  bundle: "ca.crt",
  signerCert: "ca-signer.crt",
  signerKey: "ca-signer.key",
  nextCert: "ca-next.crt",
  nextKey: "ca-next.key",
} as const;

/** Annotations of the Secret, and (`BUNDLE_SINCE`) of every object the bundle is injected into. */
export const PHASE_SINCE_ANNOTATION = "tessera.dev/ca-phase-since";
export const BUNDLE_SINCE_ANNOTATION = "tessera.dev/ca-bundle-since";

/** `certificates` as the data and annotations of the Secret `name` in `namespace`. */
export function certificatesSecret(
  certificates: WebhookCertificates,
  namespace: string,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): V1Secret {
  const data: Record<string, string> = {
    [SECRET_KEYS.servingCert]: certificates.serving.certPem,
    [SECRET_KEYS.servingKey]: certificates.serving.keyPem,
    [SECRET_KEYS.bundle]: certificates.bundle.join(""),
    [SECRET_KEYS.signerCert]: certificates.signer.certPem,
    [SECRET_KEYS.signerKey]: certificates.signer.keyPem,
  };
  if (certificates.next) {
    data[SECRET_KEYS.nextCert] = certificates.next.certPem;
    data[SECRET_KEYS.nextKey] = certificates.next.keyPem;
  }
  const annotations: Record<string, string> = {
    [BUNDLE_SINCE_ANNOTATION]: isoTime(certificates.bundleSince),
  };
  if (certificates.phaseSince) annotations[PHASE_SINCE_ANNOTATION] = isoTime(certificates.phaseSince);
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace, labels: { ...labels }, annotations },
    type: "kubernetes.io/tls",
    data: Object.fromEntries(
      Object.entries(data).map(([key, value]) => [key, Buffer.from(value).toString("base64")]),
    ),
  };
}

/**
 * The certificates a Secret holds; `undefined` when it holds none that
 * can be used (keys missing, not PEM), then the source makes new ones.
 */
export function certificatesOf(secret: V1Secret): WebhookCertificates | undefined {
  const text = (key: string) => {
    const value = secret.data?.[key];
    return value === undefined ? undefined : Buffer.from(value, "base64").toString("utf8");
  };
  const pair = (certKey: string, keyKey: string): ServingCertificate | undefined => {
    const certPem = text(certKey);
    const keyPem = text(keyKey);
    return certPem !== undefined && keyPem !== undefined ? { certPem, keyPem } : undefined;
  };
  const signer = pair(SECRET_KEYS.signerCert, SECRET_KEYS.signerKey);
  const serving = pair(SECRET_KEYS.servingCert, SECRET_KEYS.servingKey);
  const bundle = splitPem(text(SECRET_KEYS.bundle) ?? "");
  if (!signer || !serving || bundle.length === 0) return undefined;
  try {
    for (const pem of [signer.certPem, serving.certPem, ...bundle]) new X509Certificate(pem);
  } catch {
    return undefined;
  }
  const next = pair(SECRET_KEYS.nextCert, SECRET_KEYS.nextKey);
  const annotations = secret.metadata?.annotations ?? {};
  const date = (value: string | undefined) => {
    const parsed = value === undefined ? NaN : Date.parse(value);
    return Number.isNaN(parsed) ? undefined : new Date(parsed);
  };
  const phaseSince = date(annotations[PHASE_SINCE_ANNOTATION]);
  return {
    signer,
    ...(next ? { next } : {}),
    bundle,
    serving,
    ...(phaseSince ? { phaseSince } : {}),
    bundleSince: date(annotations[BUNDLE_SINCE_ANNOTATION]) ?? new Date(0),
  };
}

/** What {@link planRotation} looks at in `certificates`, for a serving certificate naming `hosts`. */
export function rotationFacts(certificates: WebhookCertificates, hosts: readonly string[]): RotationFacts {
  const signer = new X509Certificate(certificates.signer.certPem);
  const serving = new X509Certificate(certificates.serving.certPem);
  const names = (host: string) =>
    isIP(host) ? serving.checkIP(host) !== undefined : serving.checkHost(host, { wildcards: false }) === host;
  const signerFingerprint = signer.fingerprint256;
  return {
    signer: validityOf(signer),
    serving: {
      ...validityOf(serving),
      matches: serving.checkIssued(signer) && serving.verify(signer.publicKey) && hosts.every(names),
    },
    ...(certificates.next ? { next: validityOf(new X509Certificate(certificates.next.certPem)) } : {}),
    retiring: certificates.bundle.some(
      (pem) => new X509Certificate(pem).fingerprint256 !== signerFingerprint,
    ),
    ...(certificates.phaseSince ? { phaseSince: certificates.phaseSince } : {}),
  };
}

/** What a step needs besides the certificates it changes. */
export interface StepContext extends CertificateRotationOptions {
  readonly clock: Clock;
  /** The serving certificate's host names and IP addresses. */
  readonly hosts: readonly string[];
  /** The CAs' common name (a timestamp and a random suffix are added). */
  readonly caName: string;
}

/** `certificates` after `step` (`create` ignores them: new CA, new serving certificate). */
export function applyRotationStep(
  step: RotationStep,
  certificates: WebhookCertificates | undefined,
  context: StepContext,
): WebhookCertificates {
  const now = context.clock.wallTime();
  const newCa = () =>
    certificateAuthority({
      commonName: context.caName,
      clock: context.clock,
      validityMs: context.caValidityMs,
    });
  const serve = (issuer: ServingCertificate) =>
    signedCertificate({
      hosts: context.hosts,
      issuer,
      clock: context.clock,
      validityMs: context.servingValidityMs,
    });
  if (step === "create" || certificates === undefined) {
    const signer = newCa();
    return { signer, bundle: [signer.certPem], serving: serve(signer), bundleSince: now };
  }
  const { next: _next, phaseSince: _phaseSince, ...rest } = certificates;
  switch (step) {
    case "renew-serving":
      return { ...certificates, serving: serve(certificates.signer) };
    case "add-ca": {
      const next = newCa();
      return {
        ...rest,
        next,
        bundle: [...certificates.bundle, next.certPem],
        phaseSince: now,
        bundleSince: now,
      };
    }
    case "switch-ca": {
      const signer = certificates.next ?? certificates.signer;
      return { ...rest, signer, serving: serve(signer), phaseSince: now };
    }
    case "retire-ca":
      return { ...rest, bundle: [certificates.signer.certPem], bundleSince: now };
  }
}

function validityOf(certificate: X509Certificate): { notBefore: Date; notAfter: Date } {
  return { notBefore: new Date(certificate.validFrom), notAfter: new Date(certificate.validTo) };
}

/** The PEM blocks of `text`, each with its trailing newline. */
export function splitPem(text: string): string[] {
  return (text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? []).map(
    (block) => `${block}\n`,
  );
}
