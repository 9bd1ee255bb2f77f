// `tessera generate` reading the list of reconcilers in src/controllers/index.ts,
// run as a user runs it on a copy of examples/webapp (inside the checkout, so
// the project resolves @tessera and typescript from its node_modules), and
// `tessera create api`'s edit of that list.
import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CliError } from "../src/index.js";
import { withReconcilerListed } from "../src/controller-list-edit.js";
import { importedPackages } from "../src/project-dependencies.js";

const here = dirname(fileURLToPath(import.meta.url)); // packages/cli/dist/test
const repo = join(here, "../../../..");
const bin = join(here, "../src/bin.js");

function generate(dir: string, ...args: string[]): { status: number | null; out: string } {
  const result = spawnSync(process.execPath, [bin, "generate", ...args], { cwd: dir, encoding: "utf8" });
  return { status: result.status, out: `${result.stdout}${result.stderr}` };
}

describe("tessera generate and the list of reconcilers", function () {
  this.timeout(120_000);
  let root: string;
  let project: string;
  const write = (file: string, text: string) => {
    mkdirSync(dirname(join(project, file)), { recursive: true });
    writeFileSync(join(project, file), text);
  };
  const read = (file: string) => readFileSync(join(project, file), "utf8");

  before(() => {
    mkdirSync(join(repo, ".cache"), { recursive: true });
    root = mkdtempSync(join(repo, ".cache", "cli-generate-"));
  });
  after(() => rmSync(root, { recursive: true, force: true }));
  beforeEach(() => {
    project = mkdtempSync(join(root, "webapp-"));
    cpSync(join(repo, "examples/webapp"), project, {
      recursive: true,
      filter: (src) => !/[/\\](dist|node_modules)$/.test(src),
    });
  });

  it("derives the RBAC from the listed reconcilers, as the example has it", () => {
    const run = generate(project, "--check");
    assert.equal(run.status, 0, run.out);
  });

  it("refuses a reconciler class the list leaves out, naming the class, its file and the lines to add", () => {
    const rbac = read("deploy/base/rbac.yaml");
    // Exported as the default, in a subdirectory, without `implements ReconcilerPlugin`:
    // what a search for `export class ... implements ReconcilerPlugin` missed.
    write(
      "src/controllers/extra/secret-watcher.ts",
      [
        'import type { ControllerBuilder } from "@tessera/runtime";',
        'const Secrets = { group: "", version: "v1", kind: "Secret", plural: "secrets", scope: "Namespaced" } as never;',
        "export default class SecretWatcher {",
        "  controller(on: ControllerBuilder) {",
        "    return on.for(Secrets);",
        "  }",
        "  async reconcile() {}",
        "}",
        "",
      ].join("\n"),
    );
    const run = generate(project);
    assert.equal(run.status, 2, run.out);
    assert.match(run.out, /a reconciler is not listed in src\/controllers\/index\.ts/);
    assert.match(
      run.out,
      /src\/controllers\/extra\/secret-watcher\.ts: class SecretWatcher has controller\(\) and reconcile\(\)/,
    );
    assert.match(run.out, /import SecretWatcher from "\.\/extra\/secret-watcher\.js";/);
    assert.match(run.out, /export const reconcilers = \[WebAppReconciler, SecretWatcher\];/);
    assert.match(run.out, /Not regenerated[^\n]*\n {2}deploy\/base\/rbac\.yaml/);
    assert.equal(read("deploy/base/rbac.yaml"), rbac, "the RBAC is left as it was");

    // Listed as the error says, it is read, and its kind gets RBAC.
    write(
      "src/controllers/index.ts",
      read("src/controllers/index.ts")
        .replace(/^(import .*\n)/m, '$1import SecretWatcher from "./extra/secret-watcher.js";\n')
        .replace("[WebAppReconciler]", "[WebAppReconciler, SecretWatcher]"),
    );
    const listed = generate(project);
    assert.equal(listed.status, 0, listed.out);
    assert.match(read("deploy/base/rbac.yaml"), /- secrets\n/);
  });

  it("grants patch for a declared finalizer, and refuses finalizer() without a cleanup method", () => {
    assert.match(read("src/controllers/webapp.ts"), /\.finalizer\(FINALIZER\)/);
    assert.match(
      read("deploy/base/rbac.yaml"),
      /- webapps\n {4}verbs:\n {6}- get\n {6}- list\n {6}- patch\n/,
    );
    const file = "src/controllers/webapp.ts";
    write(file, read(file).replace("  async cleanup(", "  async tearDown("));
    const run = generate(project);
    assert.equal(run.status, 2, run.out);
    assert.match(
      run.out,
      /src\/controllers\/webapp\.ts: WebAppReconciler: finalizer\("apps\.example\.com\/ordered-teardown"\) is declared but the reconciler has no cleanup\(object, ctx\) method/,
    );
  });

  it("names a field read by controller(), and says that generate does not construct the class", () => {
    const file = "src/controllers/webapp.ts";
    const source = read(file);
    // A mapping function kept in a field: undefined on an instance no constructor ran for.
    write(
      file,
      source.replace(
        "  controller(on: ControllerBuilder) {",
        "  private readonly toOwner = (() => []) as never;\n\n  controller(on: ControllerBuilder) {\n    on.watches(Services, this.toOwner);",
      ),
    );
    const run = generate(project);
    assert.equal(run.status, 2, run.out);
    assert.match(
      run.out,
      /src\/controllers\/webapp\.ts: WebAppReconciler\.controller\(on\) reads this\.toOwner, a field: tessera generate calls controller\(\) on an instance of WebAppReconciler it does not construct/,
    );
    assert.match(run.out, /methods of the class or in module-level functions/);
  });

  it("after a compile failure, says which files it wrote and which it did not regenerate", () => {
    const schema = JSON.parse(read("schemas/webapp.schema.json")) as {
      properties: { spec: { properties: Record<string, unknown> } };
    };
    schema.properties.spec.properties["tier"] = { type: "string" };
    write("schemas/webapp.schema.json", JSON.stringify(schema, null, 2));
    write("src/controllers/broken.ts", 'export const broken: number = "not a number";\n');
    const run = generate(project);
    assert.equal(run.status, 1, run.out);
    assert.match(run.out, /the project does not compile:[\s\S]*src\/controllers\/broken\.ts/);
    assert.match(
      run.out,
      /Before this error, tessera generate wrote \(from schemas\/\):\n {2}deploy\/base\/crds\/webapps\.apps\.example\.com\.yaml\n {2}src\/generated\/webapp\.ts\n/,
    );
    assert.match(
      run.out,
      /Not regenerated \(from the compiled controllers' declarations\):\n {2}deploy\/base\/rbac\.yaml\n/,
    );
    assert.match(read("src/generated/webapp.ts"), /tier\?: string/);
  });
});

describe("tessera create api's edit of src/controllers/index.ts", () => {
  let dir: string;
  before(() => {
    mkdirSync(join(repo, ".cache"), { recursive: true });
    dir = mkdtempSync(join(repo, ".cache", "cli-list-"));
    mkdirSync(join(dir, "src/controllers"), { recursive: true });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const listWith = (text: string) => {
    writeFileSync(join(dir, "src/controllers/index.ts"), text);
    return withReconcilerListed(dir, "PaymentReconciler", "payment");
  };

  it("appends to a list on one line, importing after the last import", () => {
    assert.equal(
      listWith(
        '// comment\nimport { OrderReconciler } from "./order.js";\n\nexport const reconcilers = [OrderReconciler];\n',
      ),
      '// comment\nimport { OrderReconciler } from "./order.js";\nimport { PaymentReconciler } from "./payment.js";\n\nexport const reconcilers = [OrderReconciler, PaymentReconciler];\n',
    );
  });

  it("appends to a list one per line, and fills an empty one", () => {
    assert.equal(
      listWith(
        'import { A } from "./a.js";\nimport { B } from "./b.js";\n\nexport const reconcilers = [\n  A,\n  B,\n];\n',
      ),
      'import { A } from "./a.js";\nimport { B } from "./b.js";\nimport { PaymentReconciler } from "./payment.js";\n\nexport const reconcilers = [\n  A,\n  B,\n  PaymentReconciler,\n];\n',
    );
    assert.equal(
      listWith("export const reconcilers = [];\n"),
      'import { PaymentReconciler } from "./payment.js";\n\nexport const reconcilers = [PaymentReconciler];\n',
    );
    assert.equal(
      listWith('import { A } from "./a.js";\n\nexport const reconcilers = [A] as const;\n'),
      'import { A } from "./a.js";\nimport { PaymentReconciler } from "./payment.js";\n\nexport const reconcilers = [A, PaymentReconciler] as const;\n',
    );
  });

  it("refuses a module without the list, saying what to write", () => {
    assert.throws(
      () => listWith("export default [];\n"),
      (e: Error) =>
        e instanceof CliError &&
        /has no `export const reconcilers = \[\.\.\.\]` to add PaymentReconciler to; nothing was written/.test(
          e.message,
        ) &&
        e.message.includes('import { PaymentReconciler } from "./payment.js";'),
    );
  });
});

describe("the packages generated code imports", () => {
  it("are the bare specifiers' packages, types and require() included, Node's modules not", () => {
    const source = [
      'import { a } from "@tessera/runtime";',
      'import type { V1Pod } from "@kubernetes/client-node";',
      'export * from "@tessera/runtime/server";',
      'import { createRequire } from "node:module";',
      'import { join } from "path";',
      'import { local } from "./local.js";',
      'const f = require("ajv/dist/runtime/equal").default;',
      'const m = await import("yaml");',
    ].join("\n");
    assert.deepEqual([...importedPackages(source)].sort(), [
      "@kubernetes/client-node",
      "@tessera/runtime",
      "ajv",
      "yaml",
    ]);
  });
});

describe("tessera generate with versions and webhooks, on a copy of examples/webapp", function () {
  this.timeout(180_000);
  let root: string;
  let project: string;
  const read = (file: string) => readFileSync(join(project, file), "utf8");
  const tessera = (...args: string[]) => {
    const result = spawnSync(process.execPath, [bin, ...args], { cwd: project, encoding: "utf8" });
    return { status: result.status, out: `${result.stdout}${result.stderr}` };
  };

  before(() => {
    mkdirSync(join(repo, ".cache"), { recursive: true });
    root = mkdtempSync(join(repo, ".cache", "cli-versions-"));
    project = join(root, "webapp");
    cpSync(join(repo, "examples/webapp"), project, {
      recursive: true,
      filter: (src) => !/[/\\](dist|node_modules)$/.test(src),
    });
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it("adds a version, refuses to generate it without a conversion, then writes the CRD's conversion and the webhooks' manifests", () => {
    const added = tessera("create", "api", "WebApp", "--version", "v1");
    assert.equal(added.status, 0, added.out);
    assert.match(
      added.out,
      /renamed schemas\/webapp\.schema\.json to schemas\/webapp\.v1alpha1\.schema\.json/,
    );
    assert.match(added.out, /run `tessera create webhook WebApp --conversion`/);

    const refused = tessera("generate");
    assert.equal(refused.status, 2, refused.out);
    assert.match(
      refused.out,
      /webapps\.apps\.example\.com has versions v1, v1alpha1 and no conversion between them/,
    );
    assert.match(
      refused.out,
      /Not regenerated[^\n]*\n {2}deploy\/base\/crds\/webapps\.apps\.example\.com\.yaml/,
    );

    const created = tessera("create", "webhook", "WebApp", "--defaulting", "--validation", "--conversion");
    assert.equal(created.status, 0, created.out);
    const crd = read("deploy/base/crds/webapps.apps.example.com.yaml");
    assert.match(crd, /- name: v1\n {6}served: true\n {6}storage: false/);
    assert.match(crd, /- name: v1alpha1\n {6}served: true\n {6}storage: true/);
    assert.match(
      crd,
      /conversion:\n {4}strategy: Webhook\n {4}webhook:\n {6}conversionReviewVersions:\n {8}- v1\n {6}clientConfig:\n {8}service:\n {10}namespace: webapp\n {10}name: webapp-webhook-service\n {10}path: \/convert/,
    );
    assert.match(read("src/generated/webapp.v1.ts"), /export const WebAppsV1 = defineResource<WebAppV1>/);
    const manifests = read("deploy/base/webhooks/manifests.yaml");
    assert.match(manifests, /path: \/mutate-apps-example-com-v1alpha1-webapp/);
    assert.match(manifests, /path: \/validate-apps-example-com-v1alpha1-webapp/);
    const rbac = read("deploy/base/rbac.yaml");
    assert.match(rbac, /resourceNames:\n {6}- webapps\.apps\.example\.com/);
    assert.match(rbac, /resourceNames:\n {6}- webapp-webhook-server-cert/);
    assert.equal(tessera("generate", "--check").status, 0, "a second generate changes nothing");

    // A webhook plugin the list leaves out would be neither served nor registered: named, with the lines to add.
    writeFileSync(
      join(project, "src/webhooks/audit.ts"),
      [
        'import type { WebhookBuilder } from "@tessera/runtime";',
        'import { WebApps } from "../generated/webapp.js";',
        "export class AuditWebhook {",
        "  webhook(on: WebhookBuilder) {",
        "    return on.for(WebApps);",
        "  }",
        "  validateDelete() {}",
        "}",
        "",
      ].join("\n"),
    );
    const unlistedPlugin = tessera("generate");
    assert.equal(unlistedPlugin.status, 2, unlistedPlugin.out);
    assert.match(unlistedPlugin.out, /a webhook plugin is not listed in src\/webhooks\/index\.ts/);
    assert.match(unlistedPlugin.out, /src\/webhooks\/audit\.ts: class AuditWebhook has webhook\(\)/);
    assert.match(unlistedPlugin.out, /export const webhooks = \[WebAppWebhook, AuditWebhook\] as const;/);
    rmSync(join(project, "src/webhooks/audit.ts"));

    // Without the Component in the base, the webhooks would not be deployed: generate says what to add.
    const kustomization = join(project, "deploy/base/kustomization.yaml");
    writeFileSync(
      kustomization,
      read("deploy/base/kustomization.yaml").replace(/components:\n {2}- webhooks\n/, ""),
    );
    const unlisted = tessera("generate");
    assert.equal(unlisted.status, 2, unlisted.out);
    assert.match(unlisted.out, /does not take the webhooks' Component[\s\S]*components:\n {4}- webhooks/);
  });
});
