// The webhook certificates' building blocks without an API server: the CA
// and the certificates it signs (parsed back with node:crypto), and the
// rotation schedule on a fake clock.
import { strict as assert } from "node:assert";
import { X509Certificate } from "node:crypto";
import { createServer, request } from "node:https";
import type { AddressInfo } from "node:net";
import { CapturingLogger, FakeClock } from "@tessera/core/testing";
import { FakeClient } from "../src/testing.js";
import { SecretCertificateSource } from "../src/webhook/secret-certificate-source.js";
import { certificateAuthority, signedCertificate } from "../src/server.js";
import {
  checkRotationOptions,
  planRotation,
  renewAt,
  type CertificateRotationOptions,
  type RotationFacts,
} from "../src/webhook/certificate-rotation.js";
import {
  applyRotationStep,
  certificatesOf,
  certificatesSecret,
  rotationFacts,
  type WebhookCertificates,
} from "../src/webhook/webhook-certificate-secret.js";

const MINUTE = 60_000;

describe("certificateAuthority and signedCertificate", () => {
  const clock = new FakeClock({ wallTime: new Date("2026-06-01T12:00:00Z") });

  it("make a CA and a serving certificate it signs, with the hosts, the validity and the key identifiers", () => {
    const ca = certificateAuthority({ commonName: "widgets-webhook-ca", clock, validityMs: 10 * MINUTE });
    const caCert = new X509Certificate(ca.certPem);
    assert.equal(caCert.ca, true);
    assert.match(caCert.subject, /^CN=widgets-webhook-ca@\d+-[0-9a-f]{8}$/);
    assert.equal(caCert.issuer, caCert.subject);
    assert.ok(caCert.verify(caCert.publicKey), "the CA is self-signed");
    assert.equal(new Date(caCert.validFrom).toISOString(), "2026-06-01T11:59:00.000Z");
    assert.equal(new Date(caCert.validTo).toISOString(), "2026-06-01T12:10:00.000Z");

    const hosts = ["svc.ns.svc", "svc.ns.svc.cluster.local", "127.0.0.1", "::1"];
    const serving = signedCertificate({ hosts, issuer: ca, clock, validityMs: 5 * MINUTE });
    const cert = new X509Certificate(serving.certPem);
    assert.equal(cert.ca, false);
    assert.equal(cert.subject, "CN=svc.ns.svc");
    assert.equal(cert.issuer, caCert.subject);
    assert.ok(cert.checkIssued(caCert));
    assert.ok(cert.verify(caCert.publicKey), "signed by the CA's key");
    assert.ok(!cert.verify(cert.publicKey), "not self-signed");
    assert.equal(
      cert.subjectAltName,
      "DNS:svc.ns.svc, DNS:svc.ns.svc.cluster.local, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1",
    );
    assert.equal(cert.checkHost("svc.ns.svc.cluster.local"), "svc.ns.svc.cluster.local");
    assert.equal(cert.checkHost("other.ns.svc"), undefined);
    assert.deepEqual(cert.keyUsage, ["1.3.6.1.5.5.7.3.1"]);
    assert.equal(new Date(cert.validTo).toISOString(), "2026-06-01T12:05:00.000Z");
    // A short certificate is backdated a tenth of its life, not a minute.
    const short = new X509Certificate(
      signedCertificate({ hosts, issuer: ca, clock, validityMs: 20_000 }).certPem,
    );
    assert.equal(new Date(short.validFrom).toISOString(), "2026-06-01T11:59:58.000Z");

    const other = new X509Certificate(
      certificateAuthority({ commonName: "widgets-webhook-ca", clock }).certPem,
    );
    assert.notEqual(other.subject, caCert.subject, "two CAs never share a name");
    assert.ok(!cert.verify(other.publicKey));
    assert.throws(() => signedCertificate({ hosts: [], issuer: ca, clock }), /at least one host/);
    assert.throws(() => signedCertificate({ hosts, issuer: ca, clock, validityMs: 10 }), /at least 2000 ms/);
  });

  it("serve TLS that a client trusting the CA (alone, or with another CA) accepts and one trusting another CA refuses", async () => {
    const real = new FakeClock({ wallTime: new Date() });
    const ca = certificateAuthority({ commonName: "test-ca", clock: real });
    const other = certificateAuthority({ commonName: "test-ca", clock: real });
    const serving = signedCertificate({ hosts: ["127.0.0.1"], issuer: ca, clock: real });
    const server = createServer({ cert: serving.certPem, key: serving.keyPem }, (_, res) => res.end("ok"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const get = (trusted: string) =>
      new Promise<string>((resolve, reject) => {
        const req = request({ host: "127.0.0.1", port, ca: trusted }, (res) => {
          let body = "";
          res.on("data", (c: Buffer) => (body += c.toString()));
          res.on("end", () => resolve(body));
        });
        req.on("error", reject);
        req.end();
      });
    try {
      assert.equal(await get(ca.certPem), "ok");
      assert.equal(await get(other.certPem + ca.certPem), "ok", "the old CA first in the bundle");
      assert.equal(await get(ca.certPem + other.certPem), "ok");
      await assert.rejects(get(other.certPem), /unable to verify|self.signed|certificate/i);
    } finally {
      server.close();
    }
  });
});

describe("the webhook certificates' rotation schedule", () => {
  const options: CertificateRotationOptions = {
    servingValidityMs: 30 * MINUTE,
    caValidityMs: 60 * MINUTE,
    overlapMs: 5 * MINUTE,
  };
  const at = (iso: string) => new Date(iso);
  const validity = (from: string, to: string) => ({ notBefore: at(from), notAfter: at(to) });
  const steady: RotationFacts = {
    signer: validity("2026-01-01T00:00:00Z", "2026-01-01T03:00:00Z"),
    serving: { ...validity("2026-01-01T00:00:00Z", "2026-01-01T01:30:00Z"), matches: true },
    retiring: false,
  };

  it("plans each step from the facts and the time, and says when the next is due", () => {
    assert.deepEqual(planRotation(undefined, at("2026-01-01T00:00:00Z"), options), { step: "create" });
    assert.deepEqual(planRotation(steady, at("2026-01-01T00:30:00Z"), options), {
      dueAt: at("2026-01-01T01:00:00Z"), // the serving certificate's two thirds
    });
    assert.deepEqual(planRotation(steady, at("2026-01-01T01:00:00Z"), options), { step: "renew-serving" });
    assert.deepEqual(
      planRotation(
        { ...steady, serving: { ...steady.serving, matches: false } },
        at("2026-01-01T00:01:00Z"),
        options,
      ),
      { step: "renew-serving" },
    );
    const renewed = {
      ...steady,
      serving: { ...validity("2026-01-01T01:00:00Z", "2026-01-01T02:30:00Z"), matches: true },
    };
    assert.deepEqual(planRotation(renewed, at("2026-01-01T01:10:00Z"), options), {
      dueAt: at("2026-01-01T02:00:00Z"), // both the CA's and the serving certificate's two thirds
    });
    assert.deepEqual(planRotation(renewed, at("2026-01-01T02:00:00Z"), options), { step: "renew-serving" });
    const fresh = {
      ...renewed,
      serving: { ...validity("2026-01-01T02:00:00Z", "2026-01-01T03:30:00Z"), matches: true },
    };
    assert.deepEqual(planRotation(fresh, at("2026-01-01T02:00:00Z"), options), { step: "add-ca" });
    const adding = {
      ...fresh,
      next: validity("2026-01-01T02:00:00Z", "2026-01-01T05:00:00Z"),
      phaseSince: at("2026-01-01T02:00:00Z"),
    };
    assert.deepEqual(planRotation(adding, at("2026-01-01T02:04:59Z"), options), {
      dueAt: at("2026-01-01T02:05:00Z"),
    });
    assert.deepEqual(planRotation(adding, at("2026-01-01T02:05:00Z"), options), { step: "switch-ca" });
    const retiring = {
      signer: validity("2026-01-01T02:00:00Z", "2026-01-01T05:00:00Z"),
      serving: { ...validity("2026-01-01T02:05:00Z", "2026-01-01T03:35:00Z"), matches: true },
      retiring: true,
      phaseSince: at("2026-01-01T02:05:00Z"),
    };
    assert.deepEqual(planRotation(retiring, at("2026-01-01T02:06:00Z"), options), {
      dueAt: at("2026-01-01T02:10:00Z"),
    });
    assert.deepEqual(planRotation(retiring, at("2026-01-01T02:10:00Z"), options), { step: "retire-ca" });
    // An expired CA (the operator was down through its whole rotation) is replaced with everything else.
    assert.deepEqual(planRotation(steady, at("2026-01-01T03:00:00Z"), options), { step: "create" });
    // A rotation step without its start time is taken at once.
    const { phaseSince: _, ...undated } = adding;
    assert.deepEqual(planRotation(undated, at("2026-01-01T02:00:01Z"), options), { step: "switch-ca" });
    assert.deepEqual(
      renewAt(validity("2026-01-01T00:00:00Z", "2026-01-01T03:00:00Z")),
      at("2026-01-01T02:00:00Z"),
    );
  });

  it("refuses durations that cannot rotate safely, naming each", () => {
    assert.doesNotThrow(() => checkRotationOptions(options, MINUTE));
    assert.throws(
      () => checkRotationOptions(options, 3 * MINUTE),
      /overlapMs \(300000\) must be at least twice pollIntervalMs/,
    );
    assert.throws(
      () => checkRotationOptions({ ...options, caValidityMs: 30 * MINUTE }, MINUTE),
      /caValidityMs \(1800000\) must exceed six times overlapMs/,
    );
    assert.throws(
      () => checkRotationOptions({ ...options, servingValidityMs: 3 * MINUTE }, MINUTE),
      /servingValidityMs \(180000\) must exceed three times pollIntervalMs/,
    );
  });

  it("over two CA lifetimes, always serves a certificate from a CA trusted for an overlap already, and retires no CA still serving", () => {
    const clock = new FakeClock({ wallTime: new Date("2026-01-01T00:00:00Z") });
    const hosts = ["svc.ns.svc", "127.0.0.1"];
    const context = { ...options, clock, hosts, caName: "svc-ca" };
    const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;
    let certificates: WebhookCertificates | undefined;
    const trustedSince = new Map<string, number>(); // CA fingerprint -> when it joined the bundle
    const servedSince = new Map<string, number>(); // CA fingerprint -> when it last signed the served certificate
    const steps: string[] = [];
    for (let t = 0; t <= 2 * options.caValidityMs - 10 * MINUTE; t += MINUTE / 2) {
      const now = clock.wallTime();
      for (;;) {
        const plan = planRotation(certificates && rotationFacts(certificates, hosts), now, options);
        if (plan.step === undefined) {
          assert.ok(plan.dueAt.getTime() > now.getTime());
          break;
        }
        steps.push(plan.step);
        // Through the Secret's encoding, as replicas read it.
        const written = applyRotationStep(plan.step, certificates, context);
        certificates = certificatesOf(certificatesSecret(written, "ns", "svc-cert"));
        assert.ok(certificates);
      }
      const served = new X509Certificate(certificates!.serving.certPem);
      const bundle = certificates!.bundle.map((pem) => new X509Certificate(pem));
      for (const ca of bundle)
        if (!trustedSince.has(ca.fingerprint256)) trustedSince.set(ca.fingerprint256, now.getTime());
      for (const key of trustedSince.keys())
        if (!bundle.some((ca) => ca.fingerprint256 === key)) trustedSince.delete(key);
      const issuer = bundle.find((ca) => served.checkIssued(ca) && served.verify(ca.publicKey));
      assert.ok(issuer, `at ${now.toISOString()} the served certificate's CA is in the bundle`);
      assert.ok(
        now.getTime() < new Date(served.validTo).getTime() &&
          now.getTime() < new Date(issuer.validTo).getTime(),
      );
      const since = trustedSince.get(issuer.fingerprint256)!;
      if (steps.length > 1 && !servedSince.has(issuer.fingerprint256)) {
        assert.ok(
          now.getTime() - since >= options.overlapMs,
          `a new CA serves only after an overlap in the bundle`,
        );
      }
      servedSince.set(issuer.fingerprint256, now.getTime());
      for (const [ca, last] of servedSince) {
        if (!trustedSince.has(ca))
          assert.ok(
            now.getTime() - last >= options.overlapMs,
            "a CA leaves the bundle an overlap after it last served",
          );
      }
      assert.equal(fingerprint(certificates!.signer.certPem), issuer.fingerprint256);
      clock.advanceSync(MINUTE / 2);
    }
    assert.equal(steps[0], "create");
    assert.deepEqual(
      steps.filter((s) => s !== "renew-serving"),
      ["create", "add-ca", "switch-ca", "retire-ca", "add-ca", "switch-ca", "retire-ca"],
    );
    assert.ok(steps.filter((s) => s === "renew-serving").length >= 4);
  });
});

describe("SecretCertificateSource on a fake clock", () => {
  it("two replicas on one store: one create, each rotation step written once, both serve the latest within a poll, and they sleep between reads", async () => {
    const clock = new FakeClock({ wallTime: new Date("2026-01-01T00:00:00Z") });
    const fake = new FakeClient({ clock });
    const logger = new CapturingLogger();
    const options = {
      client: fake,
      namespace: "ops",
      secretName: "w-webhook-server-cert",
      serviceName: "w-webhook-service",
      servingValidityMs: 30 * MINUTE,
      caValidityMs: 60 * MINUTE,
      overlapMs: 5 * MINUTE,
      pollIntervalMs: MINUTE,
      clock,
      logger,
    };
    const replica = () => new SecretCertificateSource(options);
    assert.throws(
      () =>
        new SecretCertificateSource({
          ...options,
          extraHosts: ["*.example.com", "10.0.0.1", "Upper.example"],
        }),
      /extraHosts: "\*\.example\.com", "Upper\.example" is neither an IP address nor a lowercase DNS name/,
    );
    const replicas = [replica(), replica()];
    const stop = new AbortController();
    const runs = replicas.map((r) => r.run(stop.signal));
    await clock.flush();
    assert.ok(replicas.every((r) => r.current() !== undefined));
    assert.equal(replicas[0]!.current()!.certPem, replicas[1]!.current()!.certPem);
    assert.deepEqual(
      fake.writes.map((w) => w.verb),
      ["create"],
      "the second replica read the first one's Secret",
    );
    assert.equal(clock.pendingTimers, 2, "each replica waits for its next read");

    const steps = () =>
      logger.lines.filter((l) => l.fields["step"] !== undefined).map((l) => l.fields["step"]);
    for (let t = 0; t < 55 * MINUTE; t += MINUTE / 4) {
      await clock.advance(MINUTE / 4);
      assert.equal(clock.pendingTimers, 2, "no replica spins or stops");
      const secret = fake.writes[fake.writes.length - 1]!.object as { data: Record<string, string> };
      const bundle = Buffer.from(secret.data["ca.crt"]!, "base64").toString();
      for (const r of replicas) {
        const served = new X509Certificate(r.current()!.certPem);
        assert.ok(
          splitBundle(bundle).some((ca) => served.verify(ca.publicKey)),
          "every replica serves a certificate from a CA of the bundle",
        );
      }
    }
    assert.deepEqual(
      steps().filter((s) => s !== "renew-serving"),
      ["create", "add-ca", "switch-ca", "retire-ca"],
    );
    assert.equal(fake.writes.length, steps().length, "each step written once");
    assert.equal(replicas[0]!.current()!.certPem, replicas[1]!.current()!.certPem);
    stop.abort();
    await Promise.all(runs);
  });
});

function splitBundle(pem: string): X509Certificate[] {
  return (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? []).map(
    (block) => new X509Certificate(block),
  );
}
