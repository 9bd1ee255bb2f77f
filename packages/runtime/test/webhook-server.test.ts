import { strict as assert } from "node:assert";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { X509Certificate } from "node:crypto";
import type { TLSSocket } from "node:tls";
import { silentLogger, SystemClock } from "@tessera/core";
import { TestMetrics } from "@tessera/core/testing";
import { eventually, generateServingCertificates, type ServingCertificates } from "@tessera/testenv";
import { Admission, defineResource, type KubeObject, type WebhookBuilder } from "../src/index.js";
import { webhookDefinitionOf, type AdmissionWebhookDefinition } from "../src/codegen.js";
import {
  AdmissionHandler,
  ADMISSION_BODY_LIMIT_BYTES,
  Converter,
  FileCertificateSource,
  WebhookMetrics,
  WebhookServer,
} from "../src/server.js";
import { tankConversion } from "./support/tanks.js";

// The webhook server against what reaches its port besides the API server's
// reviews: bad bodies, reviews of another version, too much, plain HTTP,
// the wrong method. Each gets a status and a message saying what is wrong;
// the server keeps serving. And the certificate it serves follows its files.

interface Widget extends KubeObject {
  spec?: { replicas?: number };
}
const Widgets = defineResource<Widget>({
  group: "example.com",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  scope: "Namespaced",
});
class WidgetWebhook {
  webhook(on: WebhookBuilder) {
    return on.for(Widgets);
  }
  validateCreate(widget: Widget) {
    return (widget.spec?.replicas ?? 1) < 1 ? Admission.deny("no replicas") : Admission.allow();
  }
}
const VALIDATE = "/validate-example-com-v1-widget";

interface Answer {
  status: number;
  body: string;
  json: {
    response?: {
      uid?: string;
      allowed?: boolean;
      status?: { code?: number; message?: string };
      result?: { status: string; message?: string };
    };
  };
  peer?: X509Certificate;
}

function post(
  port: number,
  ca: string,
  path: string,
  body: string | Buffer,
  method = "POST",
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: "127.0.0.1",
        port,
        path,
        method,
        ca,
        headers: { "content-type": "application/json" },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        const peer = (res.socket as TLSSocket).getPeerX509Certificate();
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString();
          let json = {};
          try {
            json = JSON.parse(text) as Answer["json"];
          } catch {
            // not JSON: the status and text say enough
          }
          resolve({ status: res.statusCode ?? 0, body: text, json, ...(peer ? { peer } : {}) });
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const review = (apiVersion = "admission.k8s.io/v1", replicas = 1) =>
  JSON.stringify({
    apiVersion,
    kind: "AdmissionReview",
    request: {
      uid: "uid-1",
      kind: { group: "example.com", version: "v1", kind: "Widget" },
      resource: { group: "example.com", version: "v1", resource: "widgets" },
      operation: "CREATE",
      userInfo: { username: "alice" },
      object: { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w" }, spec: { replicas } },
    },
  });

describe("WebhookServer", function () {
  this.timeout(30_000);
  let dir: string;
  let certs: ServingCertificates;
  let metrics: TestMetrics;
  let server: WebhookServer;
  let stop: AbortController;
  let running: Promise<void>;
  let port = 0;

  const writeCertificate = (c: ServingCertificates) => {
    // As the kubelet swaps a mounted Secret: the key first, then the certificate (a half-written pair must not be served).
    writeFileSync(join(dir, "tls.key"), c.serving.keyPem);
    writeFileSync(join(dir, "tls.crt"), c.serving.certPem);
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "tessera-webhook-server-"));
    certs = await generateServingCertificates();
    metrics = new TestMetrics();
    const clock = new SystemClock();
    const widgetWebhook = new WidgetWebhook();
    const definition = webhookDefinitionOf(widgetWebhook) as AdmissionWebhookDefinition;
    const source = new FileCertificateSource({
      certDir: dir,
      clock,
      logger: silentLogger,
      pollIntervalMs: 200,
    });
    server = new WebhookServer({
      address: { host: "127.0.0.1", port: 0 },
      certificates: source,
      admission: [
        new AdmissionHandler({
          plugin: widgetWebhook,
          definition,
          type: "validate",
          clock,
          logger: silentLogger,
        }),
      ],
      converter: new Converter([tankConversion]),
      metrics: new WebhookMetrics(metrics.meter),
      clock,
      logger: silentLogger,
    });
    stop = new AbortController();
    running = server.run(stop.signal);
    // No certificate yet: not ready, saying where it looks.
    await eventually(
      "the source read the empty directory",
      () => !server.ready().ok && /tls\.crt/.test((server.ready() as { reason: string }).reason),
    );
    writeCertificate(certs);
    port = (await server.listening())!.port;
    assert.deepEqual(server.ready(), { ok: true });
  });

  after(async () => {
    stop.abort();
    await running;
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers an AdmissionReview v1", async () => {
    const allowed = await post(port, certs.ca.certPem, VALIDATE, review());
    assert.equal(allowed.status, 200);
    assert.deepEqual(allowed.json.response, { uid: "uid-1", allowed: true });
    const denied = await post(port, certs.ca.certPem, VALIDATE, review(undefined, 0));
    assert.equal(denied.json.response?.allowed, false);
    assert.equal(denied.json.response?.status?.message, "no replicas");
  });

  it("refuses malformed JSON, another review version, an oversized body and GET with a message, and keeps serving", async () => {
    const ca = certs.ca.certPem;
    const malformed = await post(port, ca, VALIDATE, "{ not json");
    assert.equal(malformed.status, 400);
    assert.match(
      malformed.json.response!.status!.message!,
      /the body is not JSON .*expected an AdmissionReview/,
    );

    const beta = await post(port, ca, VALIDATE, review("admission.k8s.io/v1beta1"));
    assert.equal(beta.status, 400);
    assert.match(
      beta.json.response!.status!.message!,
      /expected an AdmissionReview of admission.k8s.io\/v1, got kind "AdmissionReview" of apiVersion "admission.k8s.io\/v1beta1"; list "v1" in the webhook configuration's admissionReviewVersions/,
    );

    const huge = await post(port, ca, VALIDATE, Buffer.alloc(ADMISSION_BODY_LIMIT_BYTES + 1, 0x20));
    assert.equal(huge.status, 413);
    assert.match(
      huge.json.response!.status!.message!,
      /over the webhook server's limit of 7340032 bytes \(7 MiB\)/,
    );

    const get = await post(port, ca, VALIDATE, "", "GET");
    assert.equal(get.status, 405);
    assert.match(get.body, /POST only/);

    const unknownPath = await post(port, ca, "/validate-nothing", review());
    assert.equal(unknownPath.status, 404);

    assert.deepEqual((await post(port, ca, VALIDATE, review())).json.response, {
      uid: "uid-1",
      allowed: true,
    });
    assert.equal(
      await metrics.sum("controller_runtime_webhook_requests_total", { webhook: VALIDATE, code: "400" }),
      2,
    );
    assert.equal(
      await metrics.sum("controller_runtime_webhook_requests_total", { webhook: VALIDATE, code: "413" }),
      1,
    );
    assert.equal(
      await metrics.value("controller_runtime_webhook_requests_in_flight", { webhook: VALIDATE }),
      0,
    );
  });

  it("answers plain HTTP on its HTTPS port with a 400 that says so", async () => {
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest({ host: "127.0.0.1", port, path: VALIDATE, method: "POST" }, (res) => {
        let body = "";
        res.on("data", (c: Buffer) => (body += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      req.end(review());
    });
    assert.deepEqual(answer, { status: 400, body: "Client sent an HTTP request to an HTTPS server.\n" });
    assert.equal((await post(port, certs.ca.certPem, VALIDATE, review())).status, 200);
  });

  it("fails a ConversionReview of an unknown version with a message", async () => {
    const answer = await post(
      port,
      certs.ca.certPem,
      "/convert",
      JSON.stringify({
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "ConversionReview",
        request: {
          uid: "c-1",
          desiredAPIVersion: "conversion.example.com/v3",
          objects: [
            { apiVersion: "conversion.example.com/v1", kind: "Tank", metadata: { name: "t" }, spec: {} },
          ],
        },
      }),
    );
    assert.equal(answer.status, 200);
    assert.equal(answer.json.response?.result?.status, "Failure");
    assert.match(
      answer.json.response.result.message!,
      /unknown version v3 of Tank \(the conversion knows v1 \(hub\), v1alpha1\)/,
    );
  });

  it("keeps serving the certificate it has while the files hold a pair that does not belong together", async () => {
    const other = await generateServingCertificates();
    writeFileSync(join(dir, "tls.key"), other.serving.keyPem); // a rotation half written
    // Past the source's next reads (events and a 200 ms poll), the old certificate still answers.
    await new Promise((resolve) => setTimeout(resolve, 600));
    const answer = await post(port, certs.ca.certPem, VALIDATE, review());
    assert.equal(answer.status, 200);
    assert.deepEqual(server.ready(), { ok: true });
    writeFileSync(join(dir, "tls.key"), certs.serving.keyPem);
  });

  it("serves a new certificate once its files change, without a restart", async () => {
    const before = await post(port, certs.ca.certPem, VALIDATE, review());
    const rotated = await generateServingCertificates();
    writeCertificate(rotated);
    await eventually("the new certificate is served", async () => {
      try {
        const answer = await post(port, rotated.ca.certPem, VALIDATE, review());
        return answer.status === 200 && answer.peer?.fingerprint256 !== before.peer?.fingerprint256;
      } catch {
        return false; // still the old certificate: the new CA does not verify it
      }
    });
    certs = rotated;
  });
});
