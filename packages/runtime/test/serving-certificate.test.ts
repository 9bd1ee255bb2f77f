import { strict as assert } from "node:assert";
import { X509Certificate, createPrivateKey, createPublicKey } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FakeClock } from "@tessera/core/testing";
import { EndpointServer, readServingCertificate, selfSignedCertificate } from "../src/server.js";

/** GET over HTTPS; resolves with the status and body, or rejects with the TLS error. */
function get(port: number, ca: string | undefined): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path: "/metrics", ...(ca !== undefined ? { ca } : {}) },
      (res) => {
        let body = "";
        res.on("data", (c: Buffer) => (body += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("selfSignedCertificate", () => {
  const clock = new FakeClock({ wallTime: new Date("2026-06-01T12:00:00Z") });

  it("is an X.509 certificate for the hosts given, signed by its own key, valid for a year from the clock", () => {
    const { certPem, keyPem } = selfSignedCertificate({
      hosts: ["localhost", "127.0.0.1", "::1", "metrics.example"],
      clock,
    });
    const cert = new X509Certificate(certPem);
    assert.ok(cert.verify(cert.publicKey), "self-signed");
    assert.equal(
      createPublicKey(createPrivateKey(keyPem)).export({ type: "spki", format: "pem" }),
      cert.publicKey.export({ type: "spki", format: "pem" }),
      "the key belongs to the certificate",
    );
    assert.equal(cert.checkHost("localhost"), "localhost");
    assert.equal(cert.checkHost("metrics.example"), "metrics.example");
    assert.equal(cert.checkIP("127.0.0.1"), "127.0.0.1");
    assert.equal(cert.checkIP("::1"), "::1");
    assert.equal(cert.checkHost("other.example"), undefined);
    assert.equal(cert.ca, false);
    assert.equal(new Date(cert.validFrom).toISOString(), "2026-06-01T11:59:00.000Z");
    assert.equal(new Date(cert.validTo).toISOString(), "2027-06-01T11:59:00.000Z");
    assert.deepEqual(cert.keyUsage, ["1.3.6.1.5.5.7.3.1"]);
    assert.throws(() => selfSignedCertificate({ hosts: [], clock }), /at least one host/);
  });

  it("serves HTTPS that a client trusting it accepts and a verifying client without it refuses", async () => {
    const tls = selfSignedCertificate({
      hosts: ["127.0.0.1"],
      clock: new FakeClock({ wallTime: new Date() }),
    });
    const stop = new AbortController();
    const server = new EndpointServer({
      name: "metrics",
      address: { host: "127.0.0.1", port: 0 },
      tls,
      routes: new Map([["/metrics", (_req, res) => void res.end("up 1\n")]]),
    });
    const running = server.run(stop.signal);
    try {
      const address = await server.listening();
      assert.ok(address);
      assert.deepEqual(await get(address.port, tls.certPem), { status: 200, body: "up 1\n" });
      await assert.rejects(get(address.port, undefined), /self[- ]signed certificate/);
    } finally {
      stop.abort();
      await running;
    }
  });
});

describe("readServingCertificate", () => {
  const dir = mkdtempSync(join(tmpdir(), "tessera-cert-"));
  const clock = new FakeClock({ wallTime: new Date() });
  const write = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it("reads a matching pair, and says which file is missing or that the pair does not match", () => {
    const a = selfSignedCertificate({ hosts: ["a"], clock });
    const b = selfSignedCertificate({ hosts: ["b"], clock });
    const cert = write("tls.crt", a.certPem);
    const key = write("tls.key", a.keyPem);
    assert.deepEqual(readServingCertificate(cert, key), a);
    assert.throws(
      () => readServingCertificate(join(dir, "absent.crt"), key),
      /cannot read the certificate file ".*absent\.crt": ENOENT; check metrics\.certFile/,
    );
    assert.throws(
      () => readServingCertificate(cert, write("other.key", b.keyPem)),
      /the certificate ".*tls\.crt" and key ".*other\.key" cannot serve TLS: .*give a PEM certificate and the PEM private key that belongs to it/,
    );
  });
});
