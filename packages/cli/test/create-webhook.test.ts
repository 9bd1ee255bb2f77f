// `tessera create api --version` and `tessera create webhook` on a project's
// files (no compile: the generated-project tests compile and run what they
// write): what each writes and edits, the golden scaffold, and their errors.
import { strict as assert } from "node:assert";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CliError, createApi, createWebhook } from "../src/index.js";
import { kindNames, kindTokens } from "../src/names.js";
import { substitute, templatesDir } from "../src/templates.js";

const golden = join(dirname(fileURLToPath(import.meta.url)), "../../test/golden");

/** A project as `tessera new` leaves the files these commands read and edit. */
function project(): string {
  const dir = mkdtempSync(join(tmpdir(), "tessera-create-webhook-"));
  const vars = {
    ...kindTokens("widget-operator", "example.com", "v1alpha1", kindNames("Widget")),
    NAMESPACE: "widget-system",
    MODE: "leader",
    EXTRA_RESOURCES: "",
  };
  const copy = (from: string, to: string) => {
    mkdirSync(dirname(join(dir, to)), { recursive: true });
    writeFileSync(join(dir, to), substitute(readFileSync(join(templatesDir(), from), "utf8"), vars));
  };
  copy("api/schemas/__SINGULAR__.schema.json", "schemas/widget.schema.json");
  copy("operator/src/main.ts", "src/main.ts");
  copy("operator/deploy/base/kustomization.yaml", "deploy/base/kustomization.yaml");
  writeFileSync(
    join(dir, "tessera.json"),
    JSON.stringify({ name: "widget-operator", namespace: "widget-system", mode: "leader" }),
  );
  return dir;
}

const read = (dir: string, file: string) => readFileSync(join(dir, file), "utf8");
const header = (dir: string, file: string) =>
  (JSON.parse(read(dir, file)) as { "x-tessera": Record<string, unknown> })["x-tessera"];

describe("tessera create api --version", () => {
  it("adds a version: the lone schema named for its version and marked stored, the new one a copy", () => {
    const dir = project();
    const result = createApi({ dir, kind: "Widget", version: "v1" });
    assert.deepEqual(result.renamed, [["schemas/widget.schema.json", "schemas/widget.v1alpha1.schema.json"]]);
    assert.deepEqual(result.files, ["schemas/widget.v1alpha1.schema.json", "schemas/widget.v1.schema.json"]);
    assert.ok(!existsSync(join(dir, "schemas/widget.schema.json")));
    assert.deepEqual(header(dir, "schemas/widget.v1alpha1.schema.json"), {
      group: "example.com",
      version: "v1alpha1",
      storage: true,
      kind: "Widget",
      scope: "Namespaced",
    });
    assert.deepEqual(header(dir, "schemas/widget.v1.schema.json"), {
      group: "example.com",
      version: "v1",
      kind: "Widget",
      scope: "Namespaced",
    });
    // The rest of the file is the copy, as written.
    const body = (f: string) => read(dir, f).replace(/"x-tessera"[^}]*\}/, "");
    assert.equal(body("schemas/widget.v1.schema.json"), body("schemas/widget.v1alpha1.schema.json"));
    assert.match(result.needsConversion!, /tessera create webhook Widget --conversion/);
  });

  it("with --storage, moves the stored mark to the new version", () => {
    const dir = project();
    createApi({ dir, kind: "Widget", version: "v1beta1" });
    createApi({ dir, kind: "Widget", version: "v1", storage: true });
    assert.equal(header(dir, "schemas/widget.v1.schema.json")["storage"], true);
    assert.equal(header(dir, "schemas/widget.v1beta1.schema.json")["storage"], undefined);
    assert.equal(header(dir, "schemas/widget.v1alpha1.schema.json")["storage"], undefined);
    // Copied from the highest version there was (v1beta1).
    assert.equal(header(dir, "schemas/widget.v1.schema.json")["version"], "v1");
  });

  it("refuses a kind it has without --version, a version it has, and another group", () => {
    const dir = project();
    assert.throws(
      () => createApi({ dir, kind: "Widget" }),
      /already has a kind Widget \(example\.com, versions v1alpha1\); to add a version to it, pass --version/,
    );
    assert.throws(
      () => createApi({ dir, kind: "Widget", version: "v1alpha1" }),
      /Widget already has version v1alpha1/,
    );
    assert.throws(
      () => createApi({ dir, kind: "Widget", version: "v1", group: "other.example.com" }),
      /Widget is in group example\.com, not other\.example\.com/,
    );
    assert.ok(existsSync(join(dir, "schemas/widget.schema.json")), "nothing was renamed");
  });
});

describe("tessera create webhook", () => {
  it("writes the plugin, the conversion and their tests, lists them, registers them in main.ts and the Component in the base", () => {
    const dir = project();
    createApi({ dir, kind: "Widget", version: "v1" });
    const files = createWebhook({
      dir,
      kind: "Widget",
      defaulting: true,
      validation: true,
      conversion: true,
    });
    for (const f of [
      "src/webhooks/widget.ts",
      "test/widget.webhook.unit.test.ts",
      "src/webhooks/widget-conversion.ts",
      "test/widget-conversion.unit.test.ts",
      "src/webhooks/index.ts",
      "src/main.ts",
      "deploy/base/kustomization.yaml",
    ])
      assert.ok(files.includes(f), `${f} in ${files.join(", ")}`);
    assert.match(
      read(dir, "src/webhooks/index.ts"),
      /import \{ WidgetWebhook \} from "\.\/widget\.js";\nimport \{ widgetConversion \} from "\.\/widget-conversion\.js";\n\nexport const webhooks = \[WidgetWebhook, widgetConversion\] as const;/,
    );
    const main = read(dir, "src/main.ts");
    assert.match(
      main,
      /import \{ reconcilers \} from "\.\/controllers\/index\.js";\nimport \{ webhooks \} from "\.\/webhooks\/index\.js";/,
    );
    assert.match(main, /manager\.register\(\.\.\.reconcilers\)\.register\(\.\.\.webhooks\);/);
    assert.match(read(dir, "deploy/base/kustomization.yaml"), /\ncomponents:\n {2}- webhooks\n$/);

    const scaffold = [
      "src/webhooks/widget.ts",
      "test/widget.webhook.unit.test.ts",
      "src/webhooks/widget-conversion.ts",
      "test/widget-conversion.unit.test.ts",
    ]
      .map((f) => `### ${f}\n${read(dir, f)}`)
      .join("");
    const file = join(golden, "create-webhook-widget.txt");
    if (process.env["UPDATE_GOLDEN"]) writeFileSync(file, scaffold);
    assert.equal(scaffold, readFileSync(file, "utf8"));
  });

  it("refuses no flag, an unknown kind, a conversion of one version, and a file that exists, writing nothing", () => {
    const dir = project();
    const refuses = (options: Parameters<typeof createWebhook>[0], message: RegExp) =>
      assert.throws(
        () => createWebhook(options),
        (e: Error) => e instanceof CliError && message.test(e.message),
      );
    refuses({ dir, kind: "Widget" }, /say what the webhook does: --defaulting .*--validation .*--conversion/);
    refuses(
      { dir, kind: "Gadget", validation: true },
      /no kind Gadget under schemas\/.*tessera create api Gadget/,
    );
    refuses(
      { dir, kind: "Widget", conversion: true },
      /Widget has one version \(v1alpha1\): there is nothing to convert; add a version first with `tessera create api Widget --version <version>`/,
    );
    assert.ok(!existsSync(join(dir, "src/webhooks")), "nothing was written");
    createWebhook({ dir, kind: "Widget", defaulting: true });
    refuses(
      { dir, kind: "Widget", validation: true },
      /src\/webhooks\/widget\.ts exists; .*nothing was written/,
    );
  });
});
