// What tessera generate writes for an operator's webhooks, from fixed
// declarations: compared with golden files (UPDATE_GOLDEN=1 rewrites them),
// and the properties the manifests must have checked one by one.
import { strict as assert } from "node:assert";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments, stringify } from "yaml";
import type { WebhookDefinition } from "@tessera/runtime/codegen";
import {
  groupKindVersions,
  readKindSchema,
  rbacManifests,
  webhookManifests,
  deriveRules,
} from "../src/index.js";
import { withWebhookRules } from "../src/webhook-manifests.js";

// Golden files live in the source tree (test/golden), next to this file's source.
const golden = join(dirname(fileURLToPath(import.meta.url)), "../../test/golden");
const config = { name: "widget-operator", namespace: "widget-system", mode: "leader" as const };

const Widgets = {
  group: "example.com",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  scope: "Namespaced" as const,
};
const Gadgets = { group: "example.com", version: "v1alpha1", kind: "Gadget" };

const webhooks: WebhookDefinition[] = [
  {
    type: "admission",
    for: Widgets as never,
    mutatingPath: "/mutate-example-com-v1-widget",
    validatingPath: "/validate-example-com-v1-widget",
    operations: ["CREATE", "UPDATE"],
    failurePolicy: "Fail",
    timeoutSeconds: 10,
  },
  {
    type: "admission",
    for: Gadgets,
    validatingPath: "/validate-example-com-v1alpha1-gadget",
    operations: ["DELETE"],
    failurePolicy: "Ignore",
    timeoutSeconds: 5,
  },
  {
    type: "conversion",
    group: "example.com",
    plural: "widgets",
    kind: "Widget",
    hubVersion: "v1",
    spokeVersions: ["v1alpha1"],
    path: "/convert",
  },
];

function widgetKind() {
  const dir = mkdtempSync(join(tmpdir(), "tessera-webhooks-"));
  const file = (version: string, storage: boolean) => {
    const path = join(dir, `widget.${version}.schema.json`);
    writeFileSync(
      path,
      JSON.stringify({
        "x-tessera": { group: "example.com", version, kind: "Widget", ...(storage ? { storage } : {}) },
        type: "object",
        properties: { spec: { type: "object", properties: { size: { type: "integer" } } } },
      }),
    );
    return readKindSchema(path);
  };
  return groupKindVersions([file("v1", true), file("v1alpha1", false)])[0]!;
}

interface Doc {
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  webhooks?: {
    name: string;
    failurePolicy: string;
    sideEffects: string;
    matchPolicy: string;
    admissionReviewVersions: string[];
    timeoutSeconds: number;
    clientConfig: { service: { name: string; namespace: string; path: string; port: number } };
    namespaceSelector: { matchExpressions: { key: string; operator: string; values: string[] }[] };
    rules: { operations: string[]; resources: string[]; apiVersions: string[] }[];
  }[];
  spec?: Record<string, unknown>;
  rules?: { apiGroups: string[]; resources: string[]; resourceNames?: string[]; verbs: string[] }[];
}
const docs = (text: string) => parseAllDocuments(text).map((d) => d.toJS() as Doc);

describe("tessera generate: the webhooks' manifests", () => {
  const out = webhookManifests(config, webhooks, [widgetKind()]);

  it("match the golden files", () => {
    const rendered = [...out.files]
      .map(([path, content]) => `### ${path}\n${content}`)
      .join("")
      .concat(
        "### deploy/base/rbac.yaml (the webhooks' rules, after a controller's)\n",
        rbacManifests(
          config.name,
          config.namespace,
          withWebhookRules(
            deriveRules([
              {
                name: "widget",
                mode: "leader",
                for: { group: "example.com", plural: "widgets" },
                owns: [],
                watches: [],
              },
            ]),
            out.rules,
          ),
        )
          .map((d) => stringify(d, { lineWidth: 0 }))
          .join("---\n"),
      );
    const file = join(golden, "webhook-manifests.txt");
    if (process.env["UPDATE_GOLDEN"]) writeFileSync(file, rendered);
    assert.equal(rendered, readFileSync(file, "utf8"));
  });

  it("register every webhook with the safe settings, skipping the operator's own namespace", () => {
    const manifests = docs(out.files.get("deploy/base/webhooks/manifests.yaml")!);
    assert.deepEqual(
      manifests.map((d) => `${d.kind} ${d.metadata.name}`),
      [
        "MutatingWebhookConfiguration widget-operator-mutating-webhook-configuration",
        "ValidatingWebhookConfiguration widget-operator-validating-webhook-configuration",
        "Service widget-operator-webhook-service",
      ],
    );
    const entries = manifests.flatMap((d) => d.webhooks ?? []);
    assert.deepEqual(
      entries.map((w) => [
        w.name,
        w.clientConfig.service.path,
        w.rules[0]!.operations,
        w.failurePolicy,
        w.timeoutSeconds,
      ]),
      [
        ["mwidget-v1.example.com", "/mutate-example-com-v1-widget", ["CREATE", "UPDATE"], "Fail", 10],
        ["vwidget-v1.example.com", "/validate-example-com-v1-widget", ["CREATE", "UPDATE"], "Fail", 10],
        ["vgadget-v1alpha1.example.com", "/validate-example-com-v1alpha1-gadget", ["DELETE"], "Ignore", 5],
      ],
    );
    for (const w of entries) {
      assert.equal(w.sideEffects, "None");
      assert.equal(w.matchPolicy, "Equivalent");
      assert.deepEqual(w.admissionReviewVersions, ["v1"]);
      assert.deepEqual(w.clientConfig.service, {
        namespace: "widget-system",
        name: "widget-operator-webhook-service",
        path: w.clientConfig.service.path,
        port: 443,
      });
      assert.deepEqual(w.namespaceSelector.matchExpressions, [
        { key: "kubernetes.io/metadata.name", operator: "NotIn", values: ["widget-system"] },
      ]);
    }
    // A GroupVersionKind without a plural gets kubebuilder's.
    assert.deepEqual(entries[2]!.rules[0]!.resources, ["gadgets"]);
    const service = manifests[2]!;
    assert.deepEqual(service.spec, {
      selector: { "app.kubernetes.io/name": "widget-operator" },
      ports: [{ name: "webhook", port: 443, targetPort: "webhook-server", protocol: "TCP" }],
    });
    assert.match(out.files.get("deploy/base/webhooks/kustomization.yaml")!, /containerPort: 9443/);
  });

  it("grant the certificate Secret and the CA injection by name, the Secret in a Role", () => {
    assert.deepEqual(out.rules.namespace, [
      {
        apiGroups: [""],
        resources: ["secrets"],
        resourceNames: ["widget-operator-webhook-server-cert"],
        verbs: ["get", "update"],
      },
      { apiGroups: [""], resources: ["secrets"], verbs: ["create"] },
    ]);
    assert.deepEqual(
      out.rules.cluster.map((r) => [r.resources[0], r.resourceNames, r.verbs]),
      [
        [
          "mutatingwebhookconfigurations",
          ["widget-operator-mutating-webhook-configuration"],
          ["get", "patch"],
        ],
        [
          "validatingwebhookconfigurations",
          ["widget-operator-validating-webhook-configuration"],
          ["get", "patch"],
        ],
        ["customresourcedefinitions", ["widgets.example.com"], ["get", "patch"]],
      ],
    );
  });

  it("have a cert-manager overlay: Issuer, Certificate, CA injection annotations, the Secret mounted and read as files", () => {
    const kustomization = docs(
      out.files.get("deploy/overlays/cert-manager/kustomization.yaml")!,
    )[0] as unknown as {
      resources: string[];
      patches: { target: { kind: string; name: string }; patch: string }[];
    };
    assert.deepEqual(kustomization.resources, ["../production", "certificate.yaml"]);
    const annotated = kustomization.patches
      .filter((p) =>
        p.patch.includes("cert-manager.io/inject-ca-from: widget-system/widget-operator-serving-cert"),
      )
      .map((p) => p.target.kind);
    assert.deepEqual(annotated, [
      "MutatingWebhookConfiguration",
      "ValidatingWebhookConfiguration",
      "CustomResourceDefinition",
    ]);
    const deployment = kustomization.patches.find((p) => p.target.kind === "Deployment")!.patch;
    assert.match(
      deployment,
      /name: TESSERA_WEBHOOK_CERT_DIR\n\s+value: \/tmp\/k8s-webhook-server\/serving-certs/,
    );
    assert.match(deployment, /secretName: widget-operator-webhook-server-cert/);
    const certificate = docs(out.files.get("deploy/overlays/cert-manager/certificate.yaml")!);
    assert.deepEqual(
      certificate.map((d) => d.kind),
      ["Issuer", "Certificate"],
    );
    assert.deepEqual((certificate[1]!.spec as { dnsNames: string[] }).dnsNames, [
      "widget-operator-webhook-service.widget-system.svc",
      "widget-operator-webhook-service.widget-system.svc.cluster.local",
    ]);
  });

  it("in a chart, are templated on the release's namespace, the Service naming the port by number", () => {
    const chart = webhookManifests(config, webhooks, [widgetKind()], { chart: true });
    const text = chart.files.get("chart/templates/webhooks.yaml")!;
    const objects = docs(text);
    assert.deepEqual(
      objects.map((d) => d.kind),
      ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "Service"],
    );
    assert.equal(objects[2]!.metadata.namespace, "{{ .Release.Namespace }}");
    assert.deepEqual((objects[2]!.spec as { ports: { targetPort: number }[] }).ports[0]!.targetPort, 9443);
    for (const w of objects.flatMap((d) => d.webhooks ?? [])) {
      assert.equal(w.clientConfig.service.namespace, "{{ .Release.Namespace }}");
      assert.deepEqual(w.namespaceSelector.matchExpressions[0]!.values, ["{{ .Release.Namespace }}"]);
    }
    assert.ok(!out.files.has("chart/templates/webhooks.yaml"), "only with a chart");
  });

  it("are nothing at all without webhooks", () => {
    const none = webhookManifests(config, [], []);
    assert.equal(none.files.size, 0);
    assert.deepEqual(none.rules, { cluster: [], namespace: [] });
  });
});
