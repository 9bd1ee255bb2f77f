// The webhook certificates the operator keeps itself, against the real API
// server: the Secret created once by replicas racing for it, served alike by
// every replica, rotated (serving certificate and CA) while a client
// connects in a loop trusting only the CA bundle the injector wrote into a
// ValidatingWebhookConfiguration, and that bundle written into webhook
// configurations and a CRD's conversion only when it differs.
import { strict as assert } from "node:assert";
import { X509Certificate } from "node:crypto";
import { createServer, request, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import { SystemClock } from "@tessera/core";
import { CapturingLogger } from "@tessera/core/testing";
import {
  ApiClient,
  ConfigMaps,
  CustomResourceDefinitions,
  Secrets,
  ValidatingWebhookConfigurations,
} from "@tessera/client";
import type { V1ConfigMap, V1ValidatingWebhookConfiguration } from "@kubernetes/client-node";
import { eventually, freePort, installCrds, simpleCrd, useControlPlane } from "@tessera/testenv";
import { certificateAuthority, type ServingCertificate } from "../../src/server.js";
import { CaBundleInjector } from "../../src/webhook/ca-bundle-injector.js";
import {
  SecretCertificateSource,
  type SecretCertificateSourceOptions,
} from "../../src/webhook/secret-certificate-source.js";
import {
  admissionWebhookPath,
  webhookResourceNames,
  type WebhookResourceNames,
} from "../../src/webhook/webhook-definition.js";
import type { ManagerConfig } from "../../src/config/manager-config.js";
import { Admission, Manager, type AdmissionWebhookPlugin, type WebhookBuilder } from "../../src/index.js";
import { createNamespace } from "./support/widget-cluster.js";

/** An HTTPS server on 127.0.0.1 serving `source`'s certificate, swapped in on every change. */
async function serveFrom(source: SecretCertificateSource): Promise<{ server: Server; port: number }> {
  const first = source.current();
  assert.ok(first, "the source has a certificate before the server starts");
  const server = createServer({ cert: first.certPem, key: first.keyPem }, (_, res) => res.end("ok"));
  source.onChange((c: ServingCertificate) => server.setSecureContext({ cert: c.certPem, key: c.keyPem }));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** GET over TLS trusting only `ca`; the certificate the server presented. */
function handshake(port: number, ca: string): Promise<X509Certificate> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, ca, agent: false }, (res) => {
      const peer = (res.socket as TLSSocket).getPeerX509Certificate();
      res.resume();
      res.on("end", () => (peer ? resolve(peer) : reject(new Error("no peer certificate"))));
    });
    req.on("error", reject);
    req.end();
  });
}

/** Resolves once `predicate` holds, polling; rejects after `timeoutMs`. */
async function until(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("Webhook certificates in a Secret (real API server)", function () {
  this.timeout(120_000);
  const env = useControlPlane();
  const stops: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  /** A replica's source, with its own client (its own connections), running until the test ends. */
  function replica(
    ns: string,
    options: Partial<SecretCertificateSourceOptions> = {},
  ): { source: SecretCertificateSource; logger: CapturingLogger; done: Promise<void> } {
    const names = webhookResourceNames("certs");
    const logger = new CapturingLogger();
    const source = new SecretCertificateSource({
      client: new ApiClient(env.cp.kubeConfig, { fieldManager: "certs-operator" }),
      namespace: ns,
      secretName: names.secret,
      serviceName: names.service,
      extraHosts: ["127.0.0.1"],
      clock: new SystemClock(),
      logger,
      ...options,
    });
    const stop = new AbortController();
    const done = source.run(stop.signal);
    stops.push(async () => {
      stop.abort();
      await done;
    });
    return { source, logger, done };
  }

  it("is created by one of two replicas started at once; both serve it, and present the same chain", async () => {
    const ns = await createNamespace(env.cp, "certs-race");
    const secretName = webhookResourceNames("certs").secret;
    const list = JSON.parse((await env.cp.raw(`/api/v1/namespaces/${ns}/secrets`)).body) as {
      metadata: { resourceVersion: string };
    };
    const a = replica(ns);
    const b = replica(ns);
    await until(
      () => a.source.current() !== undefined && b.source.current() !== undefined,
      30_000,
      "both replicas",
    );
    assert.equal(a.source.current()!.certPem, b.source.current()!.certPem, "the same serving certificate");
    assert.equal(a.source.caBundle(), b.source.caBundle(), "the same CA");

    // Every change of the Secret since before the replicas started: exactly one, its creation.
    const watch = await env.cp.raw(
      `/api/v1/namespaces/${ns}/secrets?watch=true&resourceVersion=${list.metadata.resourceVersion}&timeoutSeconds=2&fieldSelector=metadata.name=${secretName}`,
    );
    const events = watch.body
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => (JSON.parse(line) as { type: string }).type);
    assert.deepEqual(events, ["ADDED"], "one write: the loser of the create read the winner's Secret");
    const created = [
      ...a.logger.matching(/webhook certificates: create/),
      ...b.logger.matching(/webhook certificates: create/),
    ];
    assert.equal(created.length, 1, "one replica says it created the Secret");

    const client = new ApiClient(env.cp.kubeConfig, { fieldManager: "test" });
    const secret = await client.get(Secrets, { namespace: ns, name: secretName });
    assert.equal(secret?.type, "kubernetes.io/tls");
    const ca = Buffer.from(secret.data!["ca.crt"]!, "base64").toString();
    const caCert = new X509Certificate(ca);
    const servers = [await serveFrom(a.source), await serveFrom(b.source)];
    for (const { server } of servers) stops.push(() => void server.close());
    const peers = await Promise.all(servers.map(({ port }) => handshake(port, ca)));
    assert.equal(
      peers[0]!.fingerprint256,
      peers[1]!.fingerprint256,
      "both replicas present the same certificate",
    );
    assert.equal(peers[0]!.issuer, caCert.subject);
    assert.ok(peers[0]!.verify(caCert.publicKey));
    assert.equal(peers[0]!.checkHost(`certs-webhook-service.${ns}.svc`), `certs-webhook-service.${ns}.svc`);
    assert.equal(
      peers[0]!.checkHost(`certs-webhook-service.${ns}.svc.cluster.local`),
      `certs-webhook-service.${ns}.svc.cluster.local`,
    );

    // A replica started later reads the Secret and writes nothing.
    const rv = secret.metadata!.resourceVersion;
    const c = replica(ns);
    await until(() => c.source.current() !== undefined, 30_000, "the third replica");
    assert.equal(c.source.current()!.certPem, a.source.current()!.certPem);
    assert.equal(
      (await client.get(Secrets, { namespace: ns, name: secretName }))?.metadata?.resourceVersion,
      rv,
    );
  });

  it("rotates the serving certificate and the CA with no TLS failure for a client trusting the injected bundle", async function () {
    this.timeout(90_000);
    const ns = await createNamespace(env.cp, "certs-rotate");
    const client = new ApiClient(env.cp.kubeConfig, { fieldManager: "test" });
    const names = webhookResourceNames(`certs-${ns}`);
    await client.create(
      ValidatingWebhookConfigurations,
      validatingConfiguration(names.validatingConfiguration),
    );
    stops.push(async () => {
      await client.delete(ValidatingWebhookConfigurations, { name: names.validatingConfiguration });
    });
    const injector = () =>
      new CaBundleInjector({
        client: new ApiClient(env.cp.kubeConfig, { fieldManager: "certs-operator" }),
        validatingConfiguration: names.validatingConfiguration,
        logger: new CapturingLogger(),
      });
    // Seconds, not years: the CA is renewed at 2/3 of 15 s, switched and retired 2 s apart.
    const durations = {
      servingValidityMs: 6_000,
      caValidityMs: 15_000,
      overlapMs: 2_000,
      pollIntervalMs: 250,
    };
    const a = replica(ns, { ...durations, injector: injector() });
    const b = replica(ns, { ...durations, injector: injector() });
    await until(
      () => a.source.current() !== undefined && b.source.current() !== undefined,
      30_000,
      "both replicas",
    );
    const servers = [await serveFrom(a.source), await serveFrom(b.source)];
    for (const { server } of servers) stops.push(() => void server.close());

    const injected = async () => {
      const config = await client.get(ValidatingWebhookConfigurations, {
        name: names.validatingConfiguration,
      });
      const bundle = config?.webhooks?.[0]?.clientConfig.caBundle;
      return bundle ? Buffer.from(bundle, "base64").toString() : undefined;
    };
    const failures: string[] = [];
    const issuers = new Set<string>();
    const bundleSizes = new Set<number>();
    let connections = 0;
    const started = Date.now();
    while (Date.now() - started < 17_000) {
      const bundle = await injected();
      if (bundle === undefined) continue;
      bundleSizes.add(bundle.match(/BEGIN CERTIFICATE/g)!.length);
      for (const { port } of servers) {
        try {
          issuers.add((await handshake(port, bundle)).issuer);
          connections++;
        } catch (error) {
          failures.push(`${new Date().toISOString()}: ${(error as Error).message}`);
        }
      }
    }
    assert.deepEqual(failures, [], "no TLS failure across the rotation");
    assert.ok(connections > 50, `connections made: ${connections}`);
    assert.ok(
      issuers.size >= 2,
      `the served certificate changed CA (issuers seen: ${[...issuers].join(", ")})`,
    );
    assert.deepEqual([...bundleSizes].sort(), [1, 2], "the bundle held both CAs for a while, then one");
    const steps = [...a.logger.lines, ...b.logger.lines]
      .filter((l) =>
        /webhook certificates: (create|add-ca|switch-ca|retire-ca|renew-serving)$/.test(l.message),
      )
      .map((l) => l.fields["step"]);
    for (const step of ["create", "renew-serving", "add-ca", "switch-ca", "retire-ca"]) {
      assert.ok(steps.includes(step), `step ${step} taken (${steps.join(", ")})`);
    }
    assert.deepEqual(
      [...a.logger.lines, ...b.logger.lines].filter((l) => l.level === "error"),
      [],
      "no replica failed a read or a write",
    );
  });

  it("injects the CA bundle into every webhook of a configuration and a CRD's conversion, and leaves equal ones alone", async () => {
    const client = new ApiClient(env.cp.kubeConfig, { fieldManager: "test" });
    const names = webhookResourceNames("inject");
    await client.create(
      ValidatingWebhookConfigurations,
      validatingConfiguration(names.validatingConfiguration, 2),
    );
    const crd = simpleCrd({ group: "certs.example.com", kind: "Gadget" });
    (crd["spec"] as Record<string, unknown>)["conversion"] = {
      strategy: "Webhook",
      webhook: { clientConfig: { url: "https://127.0.0.1:1/convert" }, conversionReviewVersions: ["v1"] },
    };
    const plain = simpleCrd({ group: "certs.example.com", kind: "Plain" });
    await installCrds(env.cp, crd, plain);
    const logger = new CapturingLogger();
    const injector = new CaBundleInjector({
      client: new ApiClient(env.cp.kubeConfig, { fieldManager: "certs-operator" }),
      validatingConfiguration: names.validatingConfiguration,
      mutatingConfiguration: names.mutatingConfiguration, // never created
      conversionCrds: ["gadgets.certs.example.com", "plains.certs.example.com"],
      logger,
    });
    // Real CAs: the API server parses a CRD's caBundle.
    const [one, old, two] = ["one", "old", "two"].map(
      (commonName) => certificateAuthority({ commonName, clock: new SystemClock() }).certPem,
    ) as [string, string, string];
    const bundle = {
      pem: one,
      since: new Date("2026-01-01T00:00:00Z"),
    };
    const b64 = Buffer.from(bundle.pem).toString("base64");
    const read = async () => ({
      config: (await client.get(ValidatingWebhookConfigurations, { name: names.validatingConfiguration }))!,
      crd: (await client.get(CustomResourceDefinitions, { name: "gadgets.certs.example.com" }))!,
    });

    await injector.inject(bundle);
    const first = await read();
    assert.deepEqual(
      first.config.webhooks!.map((w) => w.clientConfig.caBundle),
      [b64, b64],
    );
    assert.equal(first.crd.spec.conversion?.webhook?.clientConfig?.caBundle, b64);
    assert.equal(
      first.config.metadata?.annotations?.["tessera.dev/ca-bundle-since"],
      "2026-01-01T00:00:00.000Z",
    );

    await injector.inject(bundle); // equal: no write
    const second = await read();
    assert.equal(second.config.metadata?.resourceVersion, first.config.metadata?.resourceVersion);
    assert.equal(second.crd.metadata?.resourceVersion, first.crd.metadata?.resourceVersion);
    assert.equal(
      logger.matching(/mutating.*does not exist/).length,
      1,
      "the missing configuration is logged once",
    );
    assert.equal(logger.matching(/plains.certs.example.com does not convert/).length, 1);

    // An older bundle (a replica behind) never replaces a newer one; a newer one does.
    await injector.inject({
      pem: old,
      since: new Date("2025-12-31T00:00:00Z"),
    });
    assert.equal((await read()).config.metadata?.resourceVersion, first.config.metadata?.resourceVersion);
    const newer = { pem: two, since: new Date("2026-01-02T00:00:00Z") };
    await injector.inject(newer);
    const third = await read();
    const newerB64 = Buffer.from(newer.pem).toString("base64");
    assert.deepEqual(
      third.config.webhooks!.map((w) => w.clientConfig.caBundle),
      [newerB64, newerB64],
    );
    assert.equal(third.crd.spec.conversion?.webhook?.clientConfig?.caBundle, newerB64);
    // Reset by hand (a kubectl apply of the manifests): written back, though its date is the same.
    await client.patch(
      ValidatingWebhookConfigurations,
      { name: names.validatingConfiguration },
      {
        type: "json",
        patch: [{ op: "remove", path: "/webhooks/1/clientConfig/caBundle" }],
      },
    );
    await injector.inject(newer);
    assert.deepEqual(
      (await read()).config.webhooks!.map((w) => w.clientConfig.caBundle),
      [newerB64, newerB64],
    );
  });

  /**
   * A manager serving NoForbiddenKey on a free port with the default (Secret)
   * certificate source and `certificates` settings, and the
   * ValidatingWebhookConfiguration that points the API server at it, created
   * before the manager without a caBundle, as `tessera generate` writes it.
   */
  async function managerWithWebhook(
    prefix: string,
    certificates: Partial<ManagerConfig["webhook"]["certificates"]>,
  ): Promise<{
    ns: string;
    port: number;
    manager: Manager;
    names: WebhookResourceNames;
    logger: CapturingLogger;
  }> {
    const ns = await createNamespace(env.cp, prefix);
    const name = `certs-${ns}`;
    const port = await freePort();
    const client = new ApiClient(env.cp.kubeConfig, { fieldManager: "test" });
    const names = webhookResourceNames(name);
    const configuration = validatingConfiguration(names.validatingConfiguration);
    configuration.webhooks = [
      {
        ...configuration.webhooks![0]!,
        clientConfig: { url: `https://127.0.0.1:${port}${admissionWebhookPath("validate", ConfigMaps)}` },
        rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"] }],
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } },
        failurePolicy: "Fail",
      },
    ];
    await client.create(ValidatingWebhookConfigurations, configuration);
    stops.push(async () => {
      await client.delete(ValidatingWebhookConfigurations, { name: names.validatingConfiguration });
    });
    const logger = new CapturingLogger();
    const manager = await Manager.create({
      config: {
        name,
        namespace: ns,
        healthBindAddress: "0",
        metricsBindAddress: "0",
        webhookBindAddress: `127.0.0.1:${port}`,
        webhook: { certificates: { extraHosts: ["127.0.0.1"], ...certificates } },
      },
      kubeConfig: env.cp.kubeConfig,
      env: {},
      logger,
    });
    manager.register(NoForbiddenKey);
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    stops.push(async () => {
      stop.abort();
      await running;
    });
    return { ns, port, manager, names, logger };
  }

  it("serves a manager's webhook from the Secret by default, its CA bundle injected, so the API server calls it", async () => {
    const { ns, port, manager, names } = await managerWithWebhook("certs-manager", { pollIntervalMs: 1000 });
    const client = new ApiClient(env.cp.kubeConfig, { fieldManager: "test" });
    const { webhook } = await manager.endpoints();
    assert.equal(webhook?.port, port, "the webhook server listens once the Secret's certificate is loaded");
    await eventually(
      "the CA bundle injected",
      async () => {
        const injected = await client.get(ValidatingWebhookConfigurations, {
          name: names.validatingConfiguration,
        });
        return injected?.webhooks?.[0]?.clientConfig.caBundle !== undefined;
      },
      30_000,
    );
    const secret = await client.get(Secrets, { namespace: ns, name: names.secret });
    assert.equal(
      Buffer.from(secret!.data!["ca.crt"]!, "base64").toString("base64"),
      (await client.get(ValidatingWebhookConfigurations, { name: names.validatingConfiguration }))!
        .webhooks![0]!.clientConfig.caBundle,
    );
    await assert.rejects(
      client.create(ConfigMaps, { metadata: { name: "bad", namespace: ns }, data: { forbidden: "x" } }),
      /denied the request: the key "forbidden" is not allowed/,
    );
    await client.create(ConfigMaps, { metadata: { name: "good", namespace: ns }, data: { fine: "x" } });
  });

  it("rotates under a client creating objects through the API server in a loop: no admission failure", async function () {
    // The API server keeps its connection to the webhook across certificate swaps, so this shows the whole
    // path works through a rotation; the TLS test above, which opens a connection each time, is the one that
    // catches a CA switched before its bundle was injected.
    this.timeout(90_000);
    const { ns, manager, names, logger } = await managerWithWebhook("certs-admit", {
      servingValidityMs: 6_000,
      caValidityMs: 15_000,
      overlapMs: 2_000,
      pollIntervalMs: 250,
    });
    assert.ok((await manager.endpoints()).webhook);
    const client = new ApiClient(env.cp.kubeConfig, { fieldManager: "test" });
    await eventually(
      "the CA bundle injected",
      async () =>
        (await client.get(ValidatingWebhookConfigurations, { name: names.validatingConfiguration }))
          ?.webhooks?.[0]?.clientConfig.caBundle !== undefined,
      30_000,
    );
    const secretCa = async () =>
      (await client.get(Secrets, { namespace: ns, name: names.secret }))!.data!["ca-signer.crt"];
    const firstCa = await secretCa();
    const failures: string[] = [];
    let created = 0;
    let denied = 0;
    const started = Date.now();
    for (let i = 0; Date.now() - started < 17_000; i++) {
      try {
        await client.create(ConfigMaps, {
          metadata: { name: `cm-${i}`, namespace: ns },
          data: { n: String(i) },
        });
        created++;
        // A denial proves the webhook was called, not skipped.
        await client.create(ConfigMaps, {
          metadata: { name: `bad-${i}`, namespace: ns },
          data: { forbidden: "x" },
        });
        failures.push(`bad-${i} was admitted`);
      } catch (error) {
        if (/the key "forbidden" is not allowed/.test((error as Error).message)) denied++;
        else failures.push(`${new Date().toISOString()}: ${(error as Error).message}`);
      }
    }
    assert.deepEqual(failures, [], "no admission failure across the rotation");
    assert.ok(created > 20 && denied === created, `created ${created}, denied ${denied}`);
    assert.notEqual(await secretCa(), firstCa, "the CA was rotated");
    const steps = logger.lines.flatMap((l) =>
      typeof l.fields["step"] === "string" ? [l.fields["step"]] : [],
    );
    for (const step of ["add-ca", "switch-ca", "retire-ca"]) {
      assert.ok(steps.includes(step), `step ${step} taken (${steps.join(", ")})`);
    }
  });
});

/** Denies a ConfigMap with the key `forbidden`. */
class NoForbiddenKey implements AdmissionWebhookPlugin<V1ConfigMap> {
  webhook(on: WebhookBuilder) {
    return on.for(ConfigMaps);
  }
  validateCreate(configMap: V1ConfigMap) {
    return configMap.data?.["forbidden"] !== undefined
      ? Admission.deny('the key "forbidden" is not allowed')
      : Admission.allow();
  }
}

/** A ValidatingWebhookConfiguration with `count` webhooks, for a resource nobody creates (the API server never calls them). */
function validatingConfiguration(name: string, count = 1): V1ValidatingWebhookConfiguration {
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name },
    webhooks: Array.from({ length: count }, (_, i) => ({
      name: `v${i}.certs.example.com`,
      clientConfig: { url: `https://127.0.0.1:1/validate-${i}` },
      rules: [
        {
          apiGroups: ["nothing.example.com"],
          apiVersions: ["v1"],
          operations: ["CREATE"],
          resources: ["nothings"],
        },
      ],
      sideEffects: "None",
      admissionReviewVersions: ["v1"],
      failurePolicy: "Ignore",
    })),
  };
}
