// Webhooks and a second API version in a generated project, as a user adds
// them: `tessera new`, `create webhook --defaulting --validation`,
// `create api --version v1`, `create webhook --conversion`, `generate`;
// then the project's own `npm test` (its webhook test goes through the real
// kube-apiserver), and its manifests rendered by kustomize and taken by the
// real apiserver.
import { strict as assert } from "node:assert";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { defineResource, loadKubeConfig, type KubeObject } from "@tessera/client";
import { ApiClient } from "@tessera/runtime";
import { eventually, useControlPlane, type ControlPlane } from "@tessera/testenv";

const bin = join(dirname(fileURLToPath(import.meta.url)), "../../src/bin.js");

function run(cmd: string, args: string[], cwd: string): { status: number | null; out: string } {
  const result = spawnSync(cmd, args, { cwd, encoding: "utf8", env: { ...process.env, CI: "1" } });
  return { status: result.status, out: `${result.stdout}${result.stderr}` };
}
const tessera = (args: string[], cwd: string) => run(process.execPath, [bin, ...args], cwd);

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
}

describe("a generated project with webhooks and two versions, as a user adds them", function () {
  this.timeout(900_000);
  const root = mkdtempSync(join(tmpdir(), "tessera-webhooks-"));
  const project = join(root, "gizmo-operator");
  after(() => rmSync(root, { recursive: true, force: true }));

  it("scaffolds, adds webhooks and a version with its conversion, and its own npm test passes", () => {
    const steps: [string, string[], string][] = [
      ["new", ["new", project, "--group", "toys.example.com", "--kind", "Gizmo", "--helm", "--yes"], root],
      ["create webhook", ["create", "webhook", "Gizmo", "--defaulting", "--validation"], project],
      ["create api --version", ["create", "api", "Gizmo", "--version", "v1"], project],
      ["create webhook --conversion", ["create", "webhook", "Gizmo", "--conversion"], project],
      ["generate", ["generate"], project],
    ];
    for (const [label, args, cwd] of steps) {
      const step = tessera(args, cwd);
      assert.equal(step.status, 0, `${label}: ${step.out}`);
      if (label === "create api --version")
        assert.match(step.out, /tessera create webhook Gizmo --conversion/);
    }
    for (const file of [
      "src/webhooks/gizmo.ts",
      "src/webhooks/gizmo-conversion.ts",
      "src/webhooks/index.ts",
      "schemas/gizmo.v1alpha1.schema.json",
      "schemas/gizmo.v1.schema.json",
      "src/generated/gizmo.v1.ts",
      "test/gizmo.webhook.test.ts",
      "test/gizmo.webhook.unit.test.ts",
      "test/gizmo-conversion.unit.test.ts",
      "deploy/base/webhooks/manifests.yaml",
      "deploy/overlays/cert-manager/kustomization.yaml",
    ]) {
      assert.ok(existsSync(join(project, file)), `${file} was written`);
    }
    const test = run("npm", ["test"], project);
    assert.equal(test.status, 0, test.out);
    assert.match(test.out, /GizmoWebhook, behind the API server\n\s+with the webhook served/);
    assert.match(test.out, /fills the managed-by label in on create, as a GET shows/);
    assert.match(test.out, /refuses another manager, with the message and the field in the API error/);
    assert.match(test.out, /v1 round-trips through the hub/);
    assert.doesNotMatch(test.out, /failing|pending/);
  });

  it("tessera dev serves its webhooks to the local control plane: defaulting, validation, conversion", async () => {
    const dev = spawn(process.execPath, [bin, "dev", "--no-watch"], {
      cwd: project,
      env: { ...process.env, CI: "1" },
    });
    let output = "";
    dev.stdout.on("data", (c: Buffer) => (output += c.toString()));
    dev.stderr.on("data", (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number | null>((resolve) => dev.on("exit", (code) => resolve(code)));
    try {
      await eventually("dev started the operator", () => output.includes("starting the operator"), 180_000);
      assert.match(
        output,
        /webhooks: the local control plane calls the operator at https:\/\/127\.0\.0\.1:\d+/,
      );
      const client = new ApiClient(await loadKubeConfig({ file: join(project, ".tessera/kubeconfig") }), {
        fieldManager: "test",
      });
      const handle = (version: string) =>
        defineResource<KubeObject>({
          group: "toys.example.com",
          version,
          kind: "Gizmo",
          plural: "gizmos",
          scope: "Namespaced",
        });
      await eventually(
        `the webhook defaults (dev said: ${output.slice(-1500)})`,
        async () => {
          const admitted = await client
            .create(
              handle("v1alpha1"),
              { metadata: { name: "probe", namespace: "default" } },
              {
                dryRun: true,
              },
            )
            .catch(() => undefined);
          return admitted?.metadata?.labels?.["app.kubernetes.io/managed-by"] === "gizmo-operator";
        },
        60_000,
      );
      await client.create(handle("v1"), {
        metadata: { name: "made-in-v1", namespace: "default" },
        spec: { data: { a: "1" } },
      } as KubeObject);
      const stored = await client.get(handle("v1alpha1"), { name: "made-in-v1", namespace: "default" });
      assert.equal(stored?.apiVersion, "toys.example.com/v1alpha1");
      assert.equal(stored?.metadata?.labels?.["app.kubernetes.io/managed-by"], "gizmo-operator");
      assert.deepEqual((stored as { spec?: unknown } | undefined)?.spec, { data: { a: "1" }, paused: false });
      await assert.rejects(
        client.create(handle("v1"), {
          metadata: {
            name: "refused",
            namespace: "default",
            labels: { "app.kubernetes.io/managed-by": "other" },
          },
        }),
        /managed by gizmo-operator, not other/,
      );
    } finally {
      dev.kill("SIGINT");
      assert.equal(await exited, 0, output.slice(-2000));
    }
  });

  describe("its manifests", function () {
    const env = useControlPlane();

    it("render with kustomize (base, dev, production, cert-manager), and the apiserver takes them", async () => {
      const build = spawnSync("bash", [join(dirname(bin), "../../tools/render/build.sh")], {
        encoding: "utf8",
      });
      assert.equal(build.status, 0, build.stderr);
      const render = build.stdout.trim().split("\n").pop()!;
      const rendered = (overlay: string) => {
        const out = spawnSync(render, ["kustomize", join(project, overlay)], { encoding: "utf8" });
        assert.equal(out.status, 0, `${overlay}: ${out.stderr}`);
        return parseAllDocuments(out.stdout)
          .map((d) => d.toJS() as Manifest | null)
          .filter((d): d is Manifest => d !== null);
      };
      for (const overlay of ["deploy/base", "deploy/overlays/dev", "deploy/overlays/production"]) {
        const docs = rendered(overlay);
        const kinds = docs.map((d) => d.kind);
        for (const kind of ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "Service"])
          assert.ok(kinds.includes(kind), `${overlay} renders a ${kind}: ${kinds.join(", ")}`);
        const deployment = docs.find((d) => d.kind === "Deployment")!;
        const ports = (deployment.spec as { template: { spec: { containers: { ports: object[] }[] } } })
          .template.spec.containers[0]!.ports;
        assert.ok(
          ports.some(
            (p) => JSON.stringify(p) === '{"containerPort":9443,"name":"webhook-server","protocol":"TCP"}',
          ),
          `${overlay}: the webhook port, in ${JSON.stringify(ports)}`,
        );
        if (overlay.endsWith("production")) {
          // The webhook stays up while a node drains: two replicas and the disruption budget.
          assert.equal((deployment.spec as { replicas: number }).replicas, 2);
          assert.ok(kinds.includes("PodDisruptionBudget"), `${overlay}: a PodDisruptionBudget`);
        }
        // Namespaces and CRDs first, as kubectl apply orders them.
        const order = (d: Manifest) =>
          d.kind === "Namespace" ? 0 : d.kind === "CustomResourceDefinition" ? 1 : 2;
        for (const doc of docs.sort((a, b) => order(a) - order(b))) {
          const res = await applyManifest(env.cp, doc);
          assert.ok(
            res.status === 200 || res.status === 201,
            `${overlay}: apply ${doc.kind} ${doc.metadata.name}: ${res.status} ${res.body}`,
          );
        }
      }
      // The chart, rendered by Helm's engine into another namespace, is taken too.
      const chart = spawnSync(render, ["helm", join(project, "chart"), "release", "helm-release"], {
        encoding: "utf8",
      });
      assert.equal(chart.status, 0, chart.stderr);
      const chartDocs = parseAllDocuments(chart.stdout)
        .map((d) => d.toJS() as Manifest | null)
        .filter((d): d is Manifest => d !== null);
      const chartKinds = chartDocs.map((d) => d.kind);
      for (const kind of ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "Service"])
        assert.ok(chartKinds.includes(kind), `the chart renders a ${kind}: ${chartKinds.join(", ")}`);
      await applyManifest(env.cp, {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: "helm-release" },
      });
      const order = (d: Manifest) => (d.kind === "CustomResourceDefinition" ? 0 : 1);
      for (const doc of chartDocs.sort((a, b) => order(a) - order(b))) {
        const res = await applyManifest(env.cp, doc);
        assert.ok(
          res.status === 200 || res.status === 201,
          `chart: apply ${doc.kind} ${doc.metadata.name}: ${res.status} ${res.body}`,
        );
      }
      const service = chartDocs.find((d) => d.kind === "Service")!;
      assert.equal(service.metadata.namespace, "helm-release");

      // cert-manager's own kinds are not on this apiserver: the overlay is checked as rendered.
      const withCertManager = rendered("deploy/overlays/cert-manager");
      const injected = withCertManager
        .filter(
          (d) =>
            d.metadata.annotations?.["cert-manager.io/inject-ca-from"] ===
            "gizmo-operator/gizmo-operator-serving-cert",
        )
        .map((d) => d.kind)
        .sort();
      assert.deepEqual(injected, [
        "CustomResourceDefinition",
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
      ]);
      assert.deepEqual(
        withCertManager
          .filter((d) => d.apiVersion === "cert-manager.io/v1")
          .map((d) => d.kind)
          .sort(),
        ["Certificate", "Issuer"],
      );
      assert.match(
        JSON.stringify(withCertManager.find((d) => d.kind === "Deployment")),
        /TESSERA_WEBHOOK_CERT_DIR/,
      );
    });
  });
});

const PLURALS: Record<string, string> = {
  Namespace: "namespaces",
  CustomResourceDefinition: "customresourcedefinitions",
  ServiceAccount: "serviceaccounts",
  Service: "services",
  ClusterRole: "clusterroles",
  ClusterRoleBinding: "clusterrolebindings",
  Role: "roles",
  RoleBinding: "rolebindings",
  Deployment: "deployments",
  PodDisruptionBudget: "poddisruptionbudgets",
  HorizontalPodAutoscaler: "horizontalpodautoscalers",
  MutatingWebhookConfiguration: "mutatingwebhookconfigurations",
  ValidatingWebhookConfiguration: "validatingwebhookconfigurations",
};

/** Server-side applies one rendered object as the admin. */
function applyManifest(cp: ControlPlane, doc: Manifest) {
  const plural = PLURALS[doc.kind];
  if (!plural) throw new Error(`no path for kind ${doc.kind}`);
  const base = doc.apiVersion.includes("/") ? `/apis/${doc.apiVersion}` : `/api/${doc.apiVersion}`;
  const ns = doc.metadata.namespace ? `/namespaces/${doc.metadata.namespace}` : "";
  return cp.raw(`${base}${ns}/${plural}/${doc.metadata.name}?fieldManager=test&force=true`, {
    method: "PATCH",
    body: JSON.stringify(doc),
    headers: { "content-type": "application/apply-patch+yaml" },
  });
}
