import { strict as assert } from "node:assert";
import { KubeConfig } from "@kubernetes/client-node";
import { silentLogger, SystemClock } from "@tessera/core";
import {
  Admission,
  Manager,
  Tokens,
  defineResource,
  type ApiReader,
  type KubeObject,
  type WebhookBuilder,
} from "../src/index.js";
import type { CertificateSource, ServingCertificate } from "../src/server.js";
import { selfSignedCertificate } from "../src/server.js";

import { tankConversion } from "./support/tanks.js";

// How the manager takes webhook plugins and conversions: built by injection,
// served on the webhook server once the certificate source has one, ready
// only then; mistakes refused at run with what to do.

/** A cluster never contacted: these managers run no controller. */
function unusedCluster(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: "unused", server: "https://127.0.0.1:9" }],
    users: [{ name: "unused", token: "unused" }],
    contexts: [{ name: "unused", cluster: "unused", user: "unused" }],
    currentContext: "unused",
  });
  return kubeConfig;
}

const newManager = (config: Record<string, unknown> = {}) =>
  Manager.create({
    kubeConfig: unusedCluster(),
    env: {},
    logger: silentLogger,
    config: {
      name: "webhooks-test",
      healthBindAddress: "0",
      metricsBindAddress: "0",
      webhookBindAddress: "127.0.0.1:0",
      ...config,
    },
  });

type Widget = KubeObject & { spec?: { replicas?: number } };
const Widgets = defineResource<Widget>({
  group: "example.com",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  scope: "Namespaced",
});

const built: unknown[] = [];
class WidgetWebhook {
  static readonly inject = [Tokens.ApiReader] as const;
  constructor(reader: ApiReader) {
    built.push(reader);
  }
  webhook(on: WebhookBuilder) {
    return on.for(Widgets);
  }
  validateCreate() {
    return Admission.allow();
  }
}

/** A source whose certificate the test hands over when it likes. */
class HandedSource implements CertificateSource {
  private certificate: ServingCertificate | undefined;
  private readonly listeners = new Set<(c: ServingCertificate) => void>();
  current() {
    return this.certificate;
  }
  onChange(listener: (c: ServingCertificate) => void) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  run(signal: AbortSignal) {
    return new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
  }
  hand(certificate: ServingCertificate) {
    this.certificate = certificate;
    for (const l of this.listeners) l(certificate);
  }
}

describe("Manager webhooks", () => {
  it("builds a webhook plugin by injection and serves it once the source has a certificate; ready only then", async () => {
    const manager = await newManager();
    const source = new HandedSource();
    manager.rebind(Tokens.WebhookCertificateSource, source).register(WidgetWebhook).register(tankConversion);
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    try {
      assert.equal(await manager.waitForSync(), true);
      assert.deepEqual(built, [manager.get(Tokens.ApiReader)]);
      const waiting = await manager.health.probe("readyz", { only: "webhook" });
      assert.equal(waiting.status, 500);
      assert.match(waiting.body, /webhook failed: no serving certificate yet/);
      source.hand(selfSignedCertificate({ hosts: ["127.0.0.1"], clock: new SystemClock() }));
      const { webhook } = await manager.endpoints();
      assert.ok(webhook && webhook.port > 0);
      assert.deepEqual(await manager.health.probe("readyz", { only: "webhook" }), {
        status: 200,
        body: "ok",
      });
    } finally {
      stop.abort();
      await running;
    }
  });

  // The default source is the operator's own Secret (webhook-certificates.test covers it on a real API server).
  it("with certificates from files but no webhook.certDir, run fails saying what to set", async () => {
    const manager = await newManager({ webhook: { certificates: { source: "files" } } });
    manager.register(WidgetWebhook);
    await assert.rejects(
      manager.run(new AbortController().signal),
      /webhook\.certificates\.source is files but webhook\.certDir is not set: set it \(TESSERA_WEBHOOK_CERT_DIR\) to a directory holding tls\.crt and tls\.key/,
    );
  });

  it("two plugins for one kind are refused: one plugin per kind", async () => {
    class Another {
      webhook(on: WebhookBuilder) {
        return on.for(Widgets);
      }
      validateUpdate() {}
    }
    const manager = await newManager({ webhook: { certDir: "/nonexistent" } });
    manager.register(WidgetWebhook).register(Another);
    await assert.rejects(
      manager.run(new AbortController().signal),
      /Another and WidgetWebhook both serve \/validate-example-com-v1-widget: one admission webhook plugin per kind/,
    );
  });

  it("no webhooks: no webhook server, no readiness check", async () => {
    const manager = await newManager();
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    assert.equal(await manager.waitForSync(), true);
    assert.equal((await manager.endpoints()).webhook, undefined);
    assert.ok(!manager.health.names("readyz").includes("webhook"));
    stop.abort();
    await running;
  });
});
