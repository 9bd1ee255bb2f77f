// The generated and example Deployments meet the restricted Pod Security
// Standard, as the real apiserver's PodSecurity admission judges them.
import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { useControlPlane, type ControlPlane } from "@tessera/testenv";

const repo = join(dirname(fileURLToPath(import.meta.url)), "../../../../..");
const NS = "restricted-pss";

interface PodTemplate {
  metadata?: { labels?: Record<string, string> };
  spec: { containers: { securityContext?: Record<string, unknown> }[] } & Record<string, unknown>;
}
interface Deployment {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  spec: { template: PodTemplate } & Record<string, unknown>;
}

/** The Deployment as `tessera new` writes it (placeholders filled in) or as an example ships it. */
function loadDeployment(path: string): Deployment {
  const text = readFileSync(join(repo, path), "utf8")
    .replaceAll("__NAME__", "shop-operator")
    .replaceAll("__NAMESPACE__", NS)
    .replaceAll("__REPLICAS__", "2")
    .replaceAll("__MODE__", "leader");
  const doc = parse(text) as Deployment;
  return { ...doc, metadata: { ...doc.metadata, namespace: NS } };
}

const DEPLOYMENTS = [
  "templates/operator/deploy/base/deployment.yaml",
  "examples/webapp/deploy/base/deployment.yaml",
  "examples/configmap-mirror/deploy/base/deployment.yaml",
  "examples/sharded-tenants/deploy/base/deployment.yaml",
];

function applyDeployment(cp: ControlPlane, d: Deployment) {
  return cp.raw(
    `/apis/apps/v1/namespaces/${NS}/deployments/${d.metadata.name}?fieldManager=test&force=true`,
    {
      method: "PATCH",
      body: JSON.stringify(d),
      headers: { "content-type": "application/apply-patch+yaml" },
    },
  );
}

/** The Deployment's Pod template created as a Pod, server-side dry run: PodSecurity enforces on Pods. */
function dryRunPod(cp: ControlPlane, d: Deployment) {
  const pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: `${d.metadata.name}-pod`, namespace: NS, labels: d.spec.template.metadata?.labels },
    spec: { ...d.spec.template.spec, serviceAccountName: "default" },
  };
  return cp.raw(`/api/v1/namespaces/${NS}/pods?dryRun=All`, {
    method: "POST",
    body: JSON.stringify(pod),
    headers: { "content-type": "application/json" },
  });
}

/** The same Deployment with allowPrivilegeEscalation taken out of its container. */
function withoutPrivilegeEscalationGuard(d: Deployment): Deployment {
  const copy = structuredClone(d);
  for (const c of copy.spec.template.spec.containers) delete c.securityContext?.allowPrivilegeEscalation;
  return copy;
}

describe("the generated and example Deployments under the restricted Pod Security Standard", function () {
  this.timeout(120_000);
  const env = useControlPlane();

  before(async () => {
    const res = await env.cp.raw("/api/v1/namespaces", {
      method: "POST",
      body: JSON.stringify({
        metadata: {
          name: NS,
          labels: {
            "pod-security.kubernetes.io/enforce": "restricted",
            "pod-security.kubernetes.io/enforce-version": "latest",
          },
        },
      }),
      headers: { "content-type": "application/json" },
    });
    assert.equal(res.status, 201, res.body);
  });

  for (const path of DEPLOYMENTS) {
    it(`${path}: the Deployment is applied without a PodSecurity warning, and its Pod is admitted`, async () => {
      const d = loadDeployment(path);
      const applied = await applyDeployment(env.cp, d);
      assert.ok(applied.status === 200 || applied.status === 201, `${applied.status} ${applied.body}`);
      assert.equal(applied.headers["warning"], undefined, `warning: ${String(applied.headers["warning"])}`);
      const pod = await dryRunPod(env.cp, d);
      assert.equal(pod.status, 201, `the Pod is refused: ${pod.body}`);
      assert.equal(pod.headers["warning"], undefined, `warning: ${String(pod.headers["warning"])}`);
    });
  }

  it("negative control: without allowPrivilegeEscalation: false the Deployment is warned and its Pod refused", async () => {
    const d = withoutPrivilegeEscalationGuard(loadDeployment(DEPLOYMENTS[0]!));
    d.metadata.name = "unguarded";
    const applied = await applyDeployment(env.cp, d);
    assert.ok(applied.status === 200 || applied.status === 201, `${applied.status} ${applied.body}`);
    assert.match(
      String(applied.headers["warning"]),
      /would violate PodSecurity \\?"restricted:latest\\?": allowPrivilegeEscalation != false/,
    );
    const pod = await dryRunPod(env.cp, d);
    assert.equal(pod.status, 403, pod.body);
    assert.match(
      pod.body,
      /violates PodSecurity \\?"restricted:latest\\?": allowPrivilegeEscalation != false/,
    );
  });
});
