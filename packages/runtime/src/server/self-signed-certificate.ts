import { generateKeyPairSync, randomBytes, sign } from "node:crypto";
import { isIP } from "node:net";
import type { Clock } from "@tessera/core";
import type { ServingCertificate } from "./serving-certificate.js";

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
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  // Backdated a minute, as client-go's, so a scraper whose clock is a little behind still accepts it.
  const notBefore = new Date(options.clock.wallTime().getTime() - 60_000);
  const notAfter = new Date(notBefore.getTime() + (options.validityMs ?? 365 * 24 * 3600_000));
  const name = sequence(
    set(sequence(oid("2.5.4.3"), utf8(`${options.hosts[0]}@${Math.floor(notBefore.getTime() / 1000)}`))),
  );
  const ecdsaWithSha256 = sequence(oid("1.2.840.10045.4.3.2"));
  const altNames = options.hosts.map((host) =>
    isIP(host) ? tagged(0x87, ipBytes(host)) : tagged(0x82, Buffer.from(host, "ascii")),
  );
  const extensions = tagged(
    0xa3,
    sequence(
      // keyUsage (critical): digitalSignature
      sequence(
        oid("2.5.29.15"),
        tagged(0x01, Buffer.from([0xff])),
        octets(tagged(0x03, Buffer.from([0x07, 0x80]))),
      ),
      // extKeyUsage: serverAuth
      sequence(oid("2.5.29.37"), octets(sequence(oid("1.3.6.1.5.5.7.3.1")))),
      // basicConstraints (critical): not a CA
      sequence(oid("2.5.29.19"), tagged(0x01, Buffer.from([0xff])), octets(sequence())),
      // subjectAltName
      sequence(oid("2.5.29.17"), octets(sequence(...altNames))),
    ),
  );
  const serial = randomBytes(16);
  serial[0] = serial[0]! & 0x7f; // positive
  const tbs = sequence(
    tagged(0xa0, integer(Buffer.from([2]))), // version 3
    integer(serial),
    ecdsaWithSha256,
    name,
    sequence(time(notBefore), time(notAfter)),
    name,
    publicKey.export({ type: "spki", format: "der" }),
    extensions,
  );
  // Node's ECDSA signatures are DER (r, s) by default: what X.509 wants.
  const signature = sign("sha256", tbs, privateKey);
  const der = sequence(tbs, ecdsaWithSha256, tagged(0x03, Buffer.concat([Buffer.from([0]), signature])));
  return {
    certPem: pem("CERTIFICATE", der),
    keyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  };
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

const sequence = (...items: Buffer[]) => tagged(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => tagged(0x31, Buffer.concat(items));
const octets = (content: Buffer) => tagged(0x04, content);
const utf8 = (text: string) => tagged(0x0c, Buffer.from(text, "utf8"));

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
  const iso = date.toISOString().replace(/[-:T]/g, "").slice(0, 14); // YYYYMMDDHHMMSS
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
