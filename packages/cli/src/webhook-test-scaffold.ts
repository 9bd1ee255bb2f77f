import { versionNames, type ApiKind } from "./kind-versions.js";
import { webhookClassName, type AdmissionScaffold } from "./webhook-scaffold.js";

/**
 * `test/<kind>.webhook.test.ts`: the admission webhook behind the real API
 * server. testenv's `installWebhooks` registers webhook configurations that
 * point the API server at this test process, with a CA it generated; a
 * manager serves the plugin there (`webhookBindAddress`, `webhook.certDir`);
 * the cases create objects through the API server and see what the webhook
 * did (a defaulted label on the stored object, a refusal with its message
 * and field).
 */
export function webhookControlPlaneTest(operator: string, kind: ApiKind, what: AdmissionScaffold): string {
  const { handle } = versionNames(kind, kind.storage);
  const cls = webhookClassName(kind);
  const v = kind.names.singular;
  const lines = [
    'import { strict as assert } from "node:assert";',
    'import { fileURLToPath } from "node:url";',
    'import { ApiClient, Manager } from "@tessera/runtime";',
    'import { admissionWebhookPath } from "@tessera/runtime/codegen";',
    'import { eventually, installWebhooks, useControlPlane, type InstalledWebhooks } from "@tessera/testenv";',
    `import { ${handle} } from "../src/generated/index.js";`,
    `import { ${cls}, MANAGED_BY } from "../src/webhooks/${v}.js";`,
    "",
    "// dist/test/ -> the project's deploy/base/crds, wherever mocha runs from.",
    'const crdDir = fileURLToPath(new URL("../../deploy/base/crds", import.meta.url));',
    "// The webhook behind a real kube-apiserver: installWebhooks registers configurations that send",
    "// the API server's admission requests to a manager in this process (at the paths tessera generate",
    "// writes into deploy/base/webhooks/), trusting a CA the test generated. The webhook's functions",
    `// alone are tested in ${v}.webhook.unit.test.ts.`,
    `describe("${cls}, behind the API server", function () {`,
    "  const env = useControlPlane({ crds: [crdDir] });",
    "  // Nested, so the manager stops and the webhooks are uninstalled before the control plane stops.",
    '  describe("with the webhook served", function () {',
    "  const stop = new AbortController();",
    "  let running: Promise<void>;",
    "  let installed: InstalledWebhooks;",
    "  let client: ApiClient;",
    "",
    "  before(async () => {",
    "    // What tessera generate registers for it (deploy/base/webhooks/manifests.yaml).",
    "    const rules = [",
    "      {",
    `        apiGroups: [${handle}.group],`,
    `        apiVersions: [${handle}.version],`,
    `        resources: [${handle}.plural],`,
    '        operations: ["CREATE" as const, "UPDATE" as const],',
    "      },",
    "    ];",
    "    installed = await installWebhooks(env.cp, {",
    ...(what.defaulting
      ? [`      mutating: [{ path: admissionWebhookPath("mutate", ${handle}), rules }],`]
      : []),
    ...(what.validation
      ? [`      validating: [{ path: admissionWebhookPath("validate", ${handle}), rules }],`]
      : []),
    "    });",
    "    const manager = await Manager.create({",
    "      kubeConfig: env.cp.kubeConfig,",
    "      config: {",
    `        name: "${operator}",`,
    '        namespace: "default",',
    '        healthBindAddress: "0",',
    '        metricsBindAddress: "0",',
    "        webhookBindAddress: installed.bindAddress,",
    "        webhook: { certDir: installed.certDir },",
    '        logLevel: "warn",',
    "      },",
    "      env: {},",
    "    });",
    `    manager.register(${cls});`,
    "    running = manager.run(stop.signal);",
    '    client = new ApiClient(env.cp.kubeConfig, { fieldManager: "test" });',
    "    // The API server takes up new webhook configurations within a second or so.",
    `    await eventually("the API server calls the webhook", async () => {`,
    ...(what.defaulting
      ? ['      const probe = { metadata: { name: "probe", namespace: "default" } } as never;']
      : []),
    ...(what.defaulting
      ? [
          `      const admitted = await client.create(${handle}, probe, { dryRun: true });`,
          `      return admitted.metadata?.labels?.[MANAGED_BY] === "${operator}";`,
        ]
      : [
          "      const refused = {",
          '        metadata: { name: "probe", namespace: "default", labels: { [MANAGED_BY]: "someone-else" } },',
          "      } as never;",
          `      return client.create(${handle}, refused, { dryRun: true }).then(`,
          "        () => false,",
          "        () => true,",
          "      );",
        ]),
    "    });",
    "  });",
    "  after(async () => {",
    "    stop.abort();",
    "    await running;",
    "    await installed.uninstall();",
    "  });",
  ];
  if (what.defaulting) {
    lines.push(
      "",
      '  it("fills the managed-by label in on create, as a GET shows", async () => {',
      `    await client.create(${handle}, { metadata: { name: "defaulted", namespace: "default" } } as never);`,
      `    const stored = await client.get(${handle}, { name: "defaulted", namespace: "default" });`,
      `    assert.equal(stored?.metadata?.labels?.[MANAGED_BY], "${operator}");`,
      "  });",
    );
  }
  if (what.validation) {
    lines.push(
      "",
      '  it("refuses another manager, with the message and the field in the API error", async () => {',
      "    const other = {",
      '      metadata: { name: "refused", namespace: "default", labels: { [MANAGED_BY]: "someone-else" } },',
      "    } as never;",
      `    await assert.rejects(client.create(${handle}, other), (err: Error) => {`,
      `      assert.match(err.message, /managed by ${operator}, not someone-else/);`,
      "      assert.ok(err.message.includes(`metadata.labels[${MANAGED_BY}]`), err.message);",
      "      return true;",
      "    });",
      `    assert.equal(await client.get(${handle}, { name: "refused", namespace: "default" }), undefined);`,
      "  });",
    );
  }
  lines.push("  });", "});", "");
  // One level deeper inside the nested describe (what prettier would write).
  const start = lines.indexOf('  describe("with the webhook served", function () {');
  return lines
    .map((line, i) => (i > start && i < lines.length - 3 && line !== "" ? `  ${line}` : line))
    .join("\n");
}
