import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  sign,
  X509Certificate,
  type KeyObject,
} from "node:crypto";
import { isIP } from "node:net";
import type { Clock } from "@tessera/core";
import type { ServingCertificate } from "./serving-certificate.js";
import { isoTime } from "@tessera/core";

/** Options of {@link selfSignedCertificate}. */
export interface SelfSignedCertificateOptions {
  /** Host names and IP addresses the certificate names (its subject alternative names). */
  hosts: readonly string[];
  /** Dates the validity from `clock.wallTime()`. */
  clock: Clock;
  /** How long it is valid. Default one year. */
  validityMs?: number;
}

/**
 * A self-signed ECDSA P-256 certificate and its key, made at start-up when
 * secure metrics are on and no certificate files are given, as
 * controller-runtime does: traffic is encrypted, and a scraper either
 * trusts this certificate explicitly or skips verification. Node's crypto
 * makes the key and the signature; only the certificate's DER framing
 * (RFC 5280) is written here, which spares every operator a certificate
 * library and its polyfills for one certificate.
 */
export function selfSignedCertificate(options: SelfSignedCertificateOptions): ServingCertificate {
  if (options.hosts.length === 0) {
    throw new TypeError("selfSignedCertificate: give at least one host name or IP address in hosts");
  }
  const { publicKey, privateKey } = newKeyPair();
  // Backdated a minute, as client-go's, so a scraper whose clock is a little behind still accepts it.
  const notBefore = new Date(options.clock.wallTime().getTime() - 60_000);
  const notAfter = new Date(notBefore.getTime() + (options.validityMs ?? 365 * 24 * 3600_000));
  const name = distinguishedName(`${options.hosts[0]}@${Math.floor(notBefore.getTime() / 1000)}`);
  const der = certificateDer({
    subject: name,
    issuer: name,
    publicKey,
    signingKey: privateKey,
    notBefore,
    notAfter,
    extensions: servingExtensions(options.hosts),
  });
  return { certPem: pem("CERTIFICATE", der), keyPem: privateKeyPem(privateKey) };
}

/** Options of {@link certificateAuthority}. */
export interface CertificateAuthorityOptions {
  /** The CA's common name; a timestamp and a random suffix are added, so two CAs never share a name. */
  commonName: string;
  /** Dates the validity from `clock.wallTime()`. */
  clock: Clock;
  /** How long it is valid. Default ten years. */
  validityMs?: number;
}

/**
 * A self-signed ECDSA P-256 certificate authority and its key, to sign
 * serving certificates with {@link signedCertificate}: what a client
 * (the API server calling a webhook) trusts, so the serving certificate
 * can be renewed without the client noticing. Each CA's name is unique and
 * it carries a subject key identifier, so a client trusting two of them
 * (during a rotation) finds the right issuer.
 */
export function certificateAuthority(options: CertificateAuthorityOptions): ServingCertificate {
  const { publicKey, privateKey } = newKeyPair();
  const { notBefore, notAfter } = validity(options.clock, options.validityMs ?? 10 * 365 * 24 * 3600_000);
  const name = distinguishedName(
    `${options.commonName}@${Math.floor(notBefore.getTime() / 1000)}-${randomBytes(4).toString("hex")}`,
  );
  const der = certificateDer({
    subject: name,
    issuer: name,
    publicKey,
    signingKey: privateKey,
    notBefore,
    notAfter,
    extensions: [
      // keyUsage (critical): digitalSignature, keyCertSign, cRLSign
      sequence(oid("2.5.29.15"), critical, octets(tagged(0x03, Buffer.from([0x01, 0x86])))),
      // basicConstraints (critical): a CA
      sequence(oid("2.5.29.19"), critical, octets(sequence(tagged(0x01, Buffer.from([0xff]))))),
      subjectKeyIdentifier(publicKey),
    ],
  });
  return { certPem: pem("CERTIFICATE", der), keyPem: privateKeyPem(privateKey) };
}

/** Options of {@link signedCertificate}. */
export interface SignedCertificateOptions {
  /** Host names and IP addresses the certificate names (its subject alternative names); the first is its common name. */
  hosts: readonly string[];
  /** The CA that signs it (made by {@link certificateAuthority}). */
  issuer: ServingCertificate;
  /** Dates the validity from `clock.wallTime()`. */
  clock: Clock;
  /** How long it is valid. Default one year. */
  validityMs?: number;
}

/**
 * An ECDSA P-256 serving certificate for `hosts` and its key, signed by
 * `issuer`: `certPem` holds the certificate alone (the client has the CA).
 */
export function signedCertificate(options: SignedCertificateOptions): ServingCertificate {
  if (options.hosts.length === 0) {
    throw new TypeError("signedCertificate: give at least one host name or IP address in hosts");
  }
  const issuerDer = new X509Certificate(options.issuer.certPem).raw;
  const issuerKey = createPrivateKey(options.issuer.keyPem);
  const { publicKey, privateKey } = newKeyPair();
  const { notBefore, notAfter } = validity(options.clock, options.validityMs ?? 365 * 24 * 3600_000);
  const der = certificateDer({
    subject: distinguishedName(options.hosts[0]!),
    issuer: subjectOf(issuerDer),
    publicKey,
    signingKey: issuerKey,
    notBefore,
    notAfter,
    extensions: [
      ...servingExtensions(options.hosts),
      subjectKeyIdentifier(publicKey),
      // authorityKeyIdentifier: the issuer's subject key identifier
      sequence(oid("2.5.29.35"), octets(sequence(tagged(0x80, keyIdentifier(createPublicKey(issuerKey)))))),
    ],
  });
  return { certPem: pem("CERTIFICATE", der), keyPem: privateKeyPem(privateKey) };
}

/** What a certificate is signed over, and by which key. */
interface CertificateFields {
  subject: Buffer;
  issuer: Buffer;
  publicKey: KeyObject;
  signingKey: KeyObject;
  notBefore: Date;
  notAfter: Date;
  extensions: Buffer[];
}

const ecdsaWithSha256 = sequence(oid("1.2.840.10045.4.3.2"));
const critical = tagged(0x01, Buffer.from([0xff]));

/** The DER of a version 3 certificate (RFC 5280) with `fields`, signed with ECDSA SHA-256. */
function certificateDer(fields: CertificateFields): Buffer {
  const serial = randomBytes(16);
  serial[0] = serial[0]! & 0x7f; // positive
  const tbs = sequence(
    tagged(0xa0, integer(Buffer.from([2]))), // version 3
    integer(serial),
    ecdsaWithSha256,
    fields.issuer,
    sequence(time(fields.notBefore), time(fields.notAfter)),
    fields.subject,
    fields.publicKey.export({ type: "spki", format: "der" }),
    tagged(0xa3, sequence(...fields.extensions)),
  );
  // Node's ECDSA signatures are DER (r, s) by default: what X.509 wants.
  const signature = sign("sha256", tbs, fields.signingKey);
  return sequence(tbs, ecdsaWithSha256, tagged(0x03, Buffer.concat([Buffer.from([0]), signature])));
}

/** keyUsage digitalSignature, extKeyUsage serverAuth, not a CA, and the hosts as subject alternative names. */
function servingExtensions(hosts: readonly string[]): Buffer[] {
  const altNames = hosts.map((host) =>
    isIP(host) ? tagged(0x87, ipBytes(host)) : tagged(0x82, Buffer.from(host, "ascii")),
  );
  return [
    // keyUsage (critical): digitalSignature
    sequence(oid("2.5.29.15"), critical, octets(tagged(0x03, Buffer.from([0x07, 0x80])))),
    // extKeyUsage: serverAuth
    sequence(oid("2.5.29.37"), octets(sequence(oid("1.3.6.1.5.5.7.3.1")))),
    // basicConstraints (critical): not a CA
    sequence(oid("2.5.29.19"), critical, octets(sequence())),
    // subjectAltName
    sequence(oid("2.5.29.17"), octets(sequence(...altNames))),
  ];
}

/**
 * From a minute (at most a tenth of the validity) before the clock's wall
 * time, as client-go's, so a peer whose clock is a little behind still
 * accepts it, to `validityMs` after it.
 */
function validity(clock: Clock, validityMs: number): { notBefore: Date; notAfter: Date } {
  if (!(validityMs >= 2000)) {
    throw new RangeError(`certificate validity ${validityMs} ms: give at least 2000 ms`);
  }
  const now = clock.wallTime().getTime();
  return {
    notBefore: new Date(now - Math.min(60_000, validityMs / 10)),
    notAfter: new Date(now + validityMs),
  };
}

function newKeyPair(): { publicKey: KeyObject; privateKey: KeyObject } {
  return generateKeyPairSync("ec", { namedCurve: "prime256v1" });
}

function privateKeyPem(key: KeyObject): string {
  return key.export({ type: "pkcs8", format: "pem" }).toString();
}

/** A Name of one common name. */
function distinguishedName(commonName: string): Buffer {
  return sequence(set(sequence(oid("2.5.4.3"), utf8(commonName))));
}

/** The key identifier of `key`: SHA-1 of its SubjectPublicKeyInfo (RFC 5280 allows any unique value). */
function keyIdentifier(key: KeyObject): Buffer {
  return createHash("sha1")
    .update(key.export({ type: "spki", format: "der" }))
    .digest();
}

function subjectKeyIdentifier(key: KeyObject): Buffer {
  return sequence(oid("2.5.29.14"), octets(octets(keyIdentifier(key))));
}

/** The subject Name of a certificate's DER, as its bytes: a signed certificate's issuer must be exactly it. */
function subjectOf(certificate: Buffer): Buffer {
  const tbs = children(children(certificate)[0]!);
  // version [0], serial, signature algorithm, issuer, validity, subject
  const hasVersion = tbs[0]![0] === 0xa0;
  return tbs[hasVersion ? 5 : 4]!;
}

/** The elements (each with its tag and length) of the constructed DER element `element`. */
function children(element: Buffer): Buffer[] {
  const out: Buffer[] = [];
  const { start, end } = header(element, 0);
  for (let at = start; at < end;) {
    const child = header(element, at);
    out.push(element.subarray(at, child.end));
    at = child.end;
  }
  return out;
}

/** Where the content of the DER element at `at` starts and where the element ends. */
function header(der: Buffer, at: number): { start: number; end: number } {
  const first = der[at + 1]!;
  if (first < 0x80) return { start: at + 2, end: at + 2 + first };
  const bytes = first & 0x7f;
  let length = 0;
  for (let i = 0; i < bytes; i++) length = length * 256 + der[at + 2 + i]!;
  return { start: at + 2 + bytes, end: at + 2 + bytes + length };
}

function tagged(tag: number, content: Buffer): Buffer {
  const n = content.length;
  const length =
    n < 0x80
      ? Buffer.from([n])
      : n < 0x100
        ? Buffer.from([0x81, n])
        : n < 0x10000
          ? Buffer.from([0x82, n >> 8, n & 0xff])
          : Buffer.from([0x83, n >> 16, (n >> 8) & 0xff, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), length, content]);
}

// Declarations, not arrow constants: the constants above are built with them when the module loads.
function sequence(...items: Buffer[]): Buffer {
  return tagged(0x30, Buffer.concat(items));
}
function set(...items: Buffer[]): Buffer {
  return tagged(0x31, Buffer.concat(items));
}
function octets(content: Buffer): Buffer {
  return tagged(0x04, content);
}
function utf8(text: string): Buffer {
  return tagged(0x0c, Buffer.from(text, "utf8"));
}

function integer(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0 && bytes[start + 1]! < 0x80) start++;
  return tagged(0x02, bytes.subarray(start));
}

function oid(dotted: string): Buffer {
  const [first, second, ...rest] = dotted.split(".").map(Number);
  const bytes = [first! * 40 + second!];
  for (const arc of rest) {
    const chunk = [arc & 0x7f];
    for (let v = arc >>> 7; v > 0; v >>>= 7) chunk.unshift((v & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tagged(0x06, Buffer.from(bytes));
}

/** UTCTime until 2049, GeneralizedTime from 2050, as RFC 5280 requires. */
function time(date: Date): Buffer {
  const iso = isoTime(date).replace(/[-:T]/g, "").slice(0, 14); // YYYYMMDDHHMMSS
  return date.getUTCFullYear() < 2050
    ? tagged(0x17, Buffer.from(`${iso.slice(2)}Z`, "ascii"))
    : tagged(0x18, Buffer.from(`${iso}Z`, "ascii"));
}

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split(".").map(Number));
  const [head = "", tail = ""] = ip.split("::");
  const groups = (part: string) => (part === "" ? [] : part.split(":"));
  const h = groups(head);
  const t = groups(tail);
  const all = ip.includes("::") ? [...h, ...Array<string>(8 - h.length - t.length).fill("0"), ...t] : h;
  return Buffer.from(all.flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 0xff]));
}

function pem(label: string, der: Buffer): string {
  return `-----BEGIN ${label}-----\n${der
    .toString("base64")
    .match(/.{1,64}/g)!
    .join("\n")}\n-----END ${label}-----\n`;
}
