import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import { join } from "node:path";
import { eventually, installWebhooks, simpleCrd, installCrds, useControlPlane } from "../../src/index.js";

// installWebhooks against the real kube-apiserver, with a bare HTTPS server
// in the test (no framework): a whole ValidatingWebhookConfiguration, as an
// operator's manifests hold it, is pointed at the test's server at its
// service path, with the test's CA; a CRD's conversion too; uninstall takes
// both back.
describe("installWebhooks (real API server)", function () {
  this.timeout(60_000);
  const env = useControlPlane();

  it("points a whole configuration's webhooks and a CRD's conversion at the test's server, with its CA", async () => {
    await installCrds(env.cp, simpleCrd({ group: "testenv.example.com", kind: "Gadget" }));
    const paths: string[] = [];
    const installed = await installWebhooks(env.cp, {
      configurations: [
        {
          apiVersion: "admissionregistration.k8s.io/v1",
          kind: "ValidatingWebhookConfiguration",
          metadata: { name: "testenv-validating" },
          webhooks: [
            {
              name: "deny.testenv.example.com",
              clientConfig: {
                service: { name: "op-webhook-service", namespace: "op", path: "/validate-cm" },
              },
              rules: [
                { apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"], operations: ["CREATE"] },
              ],
              objectSelector: { matchLabels: { "testenv-webhook": "deny" } },
              sideEffects: "None",
              admissionReviewVersions: ["v1"],
              failurePolicy: "Fail",
            },
          ],
        },
      ],
      conversions: ["gadgets.testenv.example.com"],
    });
    assert.equal(readFileSync(join(installed.certDir, "tls.crt"), "utf8"), installed.serving.certPem);
    assert.equal(readFileSync(join(installed.certDir, "ca.crt"), "utf8"), installed.ca.certPem);

    const stored = JSON.parse(
      (
        await env.cp.raw(
          "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/testenv-validating",
        )
      ).body,
    ) as { webhooks: { clientConfig: { url?: string; caBundle?: string; service?: unknown } }[] };
    assert.deepEqual(stored.webhooks[0]!.clientConfig, {
      url: `https://127.0.0.1:${installed.port}/validate-cm`,
      caBundle: Buffer.from(installed.ca.certPem).toString("base64"),
    });
    const crd = JSON.parse(
      (
        await env.cp.raw(
          "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.testenv.example.com",
        )
      ).body,
    ) as { spec: { conversion: { strategy: string; webhook?: { clientConfig: { url: string } } } } };
    assert.equal(crd.spec.conversion.strategy, "Webhook");
    assert.equal(
      crd.spec.conversion.webhook?.clientConfig.url,
      `https://127.0.0.1:${installed.port}/convert`,
    );

    // The API server calls the test's server with the generated certificate, and quotes its refusal.
    const server: Server = createServer(
      { cert: installed.serving.certPem, key: installed.serving.keyPem },
      (req, res) => {
        let body = "";
        req.on("data", (c: Buffer) => (body += c.toString()));
        req.on("end", () => {
          paths.push(req.url ?? "");
          const uid = (JSON.parse(body) as { request: { uid: string } }).request.uid;
          res.writeHead(200, { "content-type": "application/json" }).end(
            JSON.stringify({
              apiVersion: "admission.k8s.io/v1",
              kind: "AdmissionReview",
              response: { uid, allowed: false, status: { code: 403, message: "the test says no" } },
            }),
          );
        });
      },
    );
    await new Promise<void>((resolve) => server.listen(installed.port, installed.host, resolve));
    try {
      const create = (name: string) =>
        env.cp.raw("/api/v1/namespaces/default/configmaps", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name, labels: { "testenv-webhook": "deny" } },
          }),
        });
      let n = 0;
      await eventually("the API server asks the test's server", async () => {
        const res = await create(`denied-${n++}`);
        return res.status === 403 && /denied the request: the test says no/.test(res.body);
      });
      assert.ok(
        paths.every((p) => p.startsWith("/validate-cm?timeout=")),
        paths.join(", "),
      );
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }

    await installed.uninstall();
    const gone = await env.cp.raw(
      "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/testenv-validating",
    );
    assert.equal(gone.status, 404);
    const reset = JSON.parse(
      (
        await env.cp.raw(
          "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.testenv.example.com",
        )
      ).body,
    ) as { spec: { conversion: { strategy: string } } };
    assert.equal(reset.spec.conversion.strategy, "None");
  });

  it("points a CRD generated for a cluster (its conversion names a Service) at the test's server", async () => {
    const crd = simpleCrd({ group: "testenv.example.com", kind: "Widget" });
    const spec = crd["spec"] as Record<string, unknown>;
    spec["conversion"] = {
      strategy: "Webhook",
      webhook: {
        clientConfig: { service: { name: "op-webhook-service", namespace: "op", path: "/convert" } },
        conversionReviewVersions: ["v1"],
      },
    };
    await installCrds(env.cp, crd);
    const installed = await installWebhooks(env.cp, { conversions: ["widgets.testenv.example.com"] });
    const stored = JSON.parse(
      (
        await env.cp.raw(
          "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.testenv.example.com",
        )
      ).body,
    ) as { spec: { conversion: { webhook: { clientConfig: { url?: string; service?: unknown } } } } };
    assert.equal(stored.spec.conversion.webhook.clientConfig.url, installed.url("/convert"));
    assert.equal(stored.spec.conversion.webhook.clientConfig.service, undefined);
    await installed.uninstall();
  });
});
