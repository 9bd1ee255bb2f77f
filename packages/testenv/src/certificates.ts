// @peculiar/x509 resolves its ASN.1 schemas through tsyringe, which needs the Reflect metadata polyfill loaded first.
import "reflect-metadata";
import { webcrypto } from "node:crypto";
import { isIP } from "node:net";
import * as x509 from "@peculiar/x509";

/** PEM-encoded key pair and certificate. */
export interface CertificateFiles {
  certPem: string;
  keyPem: string;
}

/** Everything a throw-away control plane needs to run with TLS and client-certificate auth. */
export interface ControlPlaneCertificates {
  ca: CertificateFiles;
  serving: CertificateFiles;
  admin: CertificateFiles;
  /**
   * kube-controller-manager's client certificate: user
   * `system:kube-controller-manager`, which the apiserver's bootstrap RBAC
   * policy binds to the role of that name.
   */
  controllerManager: CertificateFiles;
  /** Service-account token signing key (private) and its public key. */
  serviceAccount: { privateKeyPem: string; publicKeyPem: string };
}

// ECDSA P-256 rather than RSA: key generation takes microseconds, so every
// control plane gets fresh keys without slowing start-up.
const algorithm = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
const crypto = webcrypto;

function pem(label: string, der: ArrayBuffer): string {
  const b64 = Buffer.from(der).toString("base64");
  return `-----BEGIN ${label}-----\n${b64.match(/.{1,64}/g)!.join("\n")}\n-----END ${label}-----\n`;
}

async function keyPair(): Promise<webcrypto.CryptoKeyPair> {
  return crypto.subtle.generateKey(algorithm, true, ["sign", "verify"]);
}

async function privatePem(keys: webcrypto.CryptoKeyPair): Promise<string> {
  return pem("PRIVATE KEY", await crypto.subtle.exportKey("pkcs8", keys.privateKey));
}

function serial(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(16)))
    .toString("hex")
    .replace(/^[89a-f]/, "1");
}

/** A CA's certificate and its signing key. */
interface CertificateAuthority {
  readonly cert: x509.X509Certificate;
  readonly keys: webcrypto.CryptoKeyPair;
}

async function certificateAuthority(
  name: string,
  notBefore: Date,
  notAfter: Date,
): Promise<CertificateAuthority> {
  const keys = await keyPair();
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: serial(),
      name: `CN=${name}`,
      notBefore,
      notAfter,
      keys,
      signingAlgorithm: algorithm,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, crypto),
      ],
    },
    crypto,
  );
  return { cert, keys };
}

/** A certificate signed by `ca` for `subject`, with the extended key usage `usage` and the alternative names `san`. */
async function issue(
  ca: CertificateAuthority,
  validity: { notBefore: Date; notAfter: Date },
  subject: string,
  usage: string,
  san?: x509.SubjectAlternativeNameExtension,
): Promise<CertificateFiles> {
  const keys = await keyPair();
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(
      x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
      true,
    ),
    new x509.ExtendedKeyUsageExtension([usage], false),
    await x509.AuthorityKeyIdentifierExtension.create(ca.cert, false, crypto),
  ];
  if (san) extensions.push(san);
  const cert = await x509.X509CertificateGenerator.create(
    {
      serialNumber: serial(),
      subject,
      issuer: ca.cert.subject,
      ...validity,
      publicKey: keys.publicKey,
      signingKey: ca.keys.privateKey,
      signingAlgorithm: algorithm,
      extensions,
    },
    crypto,
  );
  return { certPem: cert.toString("pem") + "\n", keyPem: await privatePem(keys) };
}

async function caFiles(ca: CertificateAuthority): Promise<CertificateFiles> {
  return { certPem: ca.cert.toString("pem") + "\n", keyPem: await privatePem(ca.keys) };
}

/**
 * Generates a CA, a serving certificate for 127.0.0.1/localhost, an admin
 * client certificate in group system:masters, a client certificate for
 * kube-controller-manager, and a service-account key pair.
 */
export async function generateControlPlaneCertificates(): Promise<ControlPlaneCertificates> {
  const validity = {
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 7 * 24 * 3600_000),
  };
  const ca = await certificateAuthority("tessera-testenv-ca", validity.notBefore, validity.notAfter);
  const serving = await issue(
    ca,
    validity,
    "CN=kube-apiserver",
    x509.ExtendedKeyUsage.serverAuth,
    new x509.SubjectAlternativeNameExtension([
      { type: "ip", value: "127.0.0.1" },
      { type: "dns", value: "localhost" },
      { type: "dns", value: "kubernetes.default.svc" },
    ]),
  );
  const admin = await issue(
    ca,
    validity,
    "CN=tessera-admin, O=system:masters",
    x509.ExtendedKeyUsage.clientAuth,
  );
  const controllerManager = await issue(
    ca,
    validity,
    "CN=system:kube-controller-manager",
    x509.ExtendedKeyUsage.clientAuth,
  );
  const saKeys = await keyPair();
  return {
    ca: await caFiles(ca),
    serving,
    admin,
    controllerManager,
    serviceAccount: {
      privateKeyPem: await privatePem(saKeys),
      publicKeyPem: pem("PUBLIC KEY", await crypto.subtle.exportKey("spki", saKeys.publicKey)),
    },
  };
}

/** A CA and a serving certificate it signed: what a webhook server in a test serves, and what the API server trusts. */
export interface ServingCertificates {
  ca: CertificateFiles;
  serving: CertificateFiles;
}

/**
 * A fresh CA and a serving certificate it signed for `hosts` (IP addresses
 * and DNS names; default 127.0.0.1 and localhost), valid for a week: for a
 * webhook server in the test process, whose CA the API server is given as
 * the webhook's `caBundle` (see `installWebhooks`).
 */
export async function generateServingCertificates(
  hosts: readonly string[] = ["127.0.0.1", "localhost"],
): Promise<ServingCertificates> {
  const validity = {
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 7 * 24 * 3600_000),
  };
  const ca = await certificateAuthority("tessera-testenv-webhook-ca", validity.notBefore, validity.notAfter);
  const serving = await issue(
    ca,
    validity,
    `CN=${hosts[0] ?? "localhost"}`,
    x509.ExtendedKeyUsage.serverAuth,
    new x509.SubjectAlternativeNameExtension(
      hosts.map((host) => (isIP(host) ? { type: "ip", value: host } : { type: "dns", value: host })),
    ),
  );
  return { ca: await caFiles(ca), serving };
}
