// The CLI as a user runs it: `tessera new` into an empty directory (the
// @tessera packages packed from this checkout, no workspace links), then the
// generated project's own `npm test` against a real control plane, then
// `tessera create api` and `tessera generate`, and the bad inputs.
import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const bin = join(dirname(fileURLToPath(import.meta.url)), "../../src/bin.js");

interface Run {
  status: number | null;
  out: string;
}

function run(cmd: string, args: string[], cwd: string): Run {
  const result = spawnSync(cmd, args, { cwd, encoding: "utf8", env: { ...process.env, CI: "1" } });
  return { status: result.status, out: `${result.stdout}${result.stderr}` };
}
const tessera = (args: string[], cwd: string) => run(process.execPath, [bin, ...args], cwd);
const npm = (args: string[], cwd: string) => run("npm", args, cwd);

function listFiles(dir: string, under = dir): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (["node_modules", "dist", "vendor"].includes(name)) return [];
    return statSync(path).isDirectory() ? listFiles(path, under) : [relative(under, path)];
  });
}

describe("tessera new, as a user runs it", function () {
  this.timeout(600_000);
  const root = mkdtempSync(join(tmpdir(), "tessera-cli-"));
  const project = join(root, "shop-operator");
  after(() => rmSync(root, { recursive: true, force: true }));

  it("scaffolds a project whose own npm test passes against the real control plane", () => {
    const started = Date.now();
    const created = tessera(
      ["new", project, "--group", "shop.example.com", "--kind", "Order", "--yes"],
      root,
    );
    assert.equal(created.status, 0, created.out);
    const pkg = JSON.parse(readFileSync(join(project, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
      overrides: Record<string, string>;
    };
    // Installed from tarballs packed from this checkout, not linked.
    assert.match(pkg.dependencies["@tessera/runtime"]!, /^file:vendor\/tessera\/tessera-runtime-\d.*\.tgz$/);
    assert.match(pkg.overrides["@tessera/sharding"]!, /^file:vendor\/tessera\//);
    assert.ok(!statSync(join(project, "node_modules/@tessera/runtime")).isSymbolicLink());
    const test = npm(["test"], project);
    assert.equal(test.status, 0, test.out);
    assert.match(test.out, /4 passing/);
    const files = listFiles(project).sort();
    const lines = files.map((f) => `${f} (${readFileSync(join(project, f), "utf8").split("\n").length - 1})`);
    console.log(
      `      tessera new to a passing npm test: ${((Date.now() - started) / 1000).toFixed(1)} s; ${files.length} files:\n        ${lines.join("\n        ")}`,
    );
    for (const expected of [
      "schemas/order.schema.json",
      "src/controllers/order.ts",
      "src/generated/order.ts",
      "src/generated/order.validator.ts",
      "src/main.ts",
      "test/order.test.ts",
      "deploy/base/crds/orders.shop.example.com.yaml",
      "deploy/base/rbac.yaml",
      "deploy/base/deployment.yaml",
      "deploy/overlays/dev/kustomization.yaml",
      "Dockerfile",
      ".gitignore",
      "tessera.json",
    ]) {
      assert.ok(files.includes(expected), `${expected} is generated; got ${files.join(", ")}`);
    }
  });

  it("adds a kind with create api, touching no file it did not create, and npm test passes again", () => {
    const before = new Map(
      listFiles(project)
        .filter((f) => !f.startsWith("src/generated/") && !f.startsWith("deploy/base/"))
        .map((f) => [f, readFileSync(join(project, f), "utf8")]),
    );
    const added = tessera(["create", "api", "Payment"], project);
    assert.equal(added.status, 0, added.out);
    for (const [file, content] of before)
      assert.equal(readFileSync(join(project, file), "utf8"), content, file);
    assert.ok(existsSync(join(project, "deploy/base/crds/payments.shop.example.com.yaml")));
    const rbac = readFileSync(join(project, "deploy/base/rbac.yaml"), "utf8");
    assert.match(rbac, /- payments\/status/);
    const test = npm(["test"], project);
    assert.equal(test.status, 0, test.out);
    assert.match(test.out, /8 passing/);
  });

  it("generate is idempotent, and --check fails after a schema edit until generate runs", () => {
    const again = tessera(["generate"], project);
    assert.equal(again.status, 0, again.out);
    assert.match(again.out, /0 written/);
    assert.equal(tessera(["generate", "--check"], project).status, 0);

    const file = join(project, "schemas/payment.schema.json");
    const schema = JSON.parse(readFileSync(file, "utf8")) as {
      properties: { spec: { properties: Record<string, unknown> } };
    };
    schema.properties.spec.properties["amount"] = { type: "integer", minimum: 0 };
    writeFileSync(file, JSON.stringify(schema, null, 2));
    const stale = tessera(["generate", "--check"], project);
    assert.equal(stale.status, 1, stale.out);
    assert.match(
      stale.out,
      /stale[\s\S]*deploy\/base\/crds\/payments\.shop\.example\.com\.yaml[\s\S]*src\/generated\/payment\.ts/,
    );
    assert.equal(tessera(["generate"], project).status, 0);
    assert.equal(tessera(["generate", "--check"], project).status, 0);
  });

  it("refuses bad input with the rule it breaks and writes nothing", () => {
    const nonEmpty = tessera(["new", project, "--yes", "--no-install"], root);
    assert.equal(nonEmpty.status, 2);
    assert.match(nonEmpty.out, /is not empty; .*--force/);

    const fresh = join(root, "fresh");
    const badKind = tessera(["new", fresh, "--kind", "order", "--yes", "--no-install"], root);
    assert.equal(badKind.status, 2);
    assert.match(badKind.out, /invalid kind "order": a kind is UpperCamelCase/);
    const badGroup = tessera(["new", fresh, "--group", "shop", "--yes", "--no-install"], root);
    assert.equal(badGroup.status, 2);
    assert.match(badGroup.out, /invalid group "shop": .*at least one dot/);
    assert.ok(!existsSync(fresh), "nothing was written");

    const file = join(project, "schemas/payment.schema.json");
    const schema = JSON.parse(readFileSync(file, "utf8")) as {
      properties: { spec: { properties: Record<string, Record<string, unknown>> } };
    };
    delete schema.properties.spec.properties["amount"]!["type"];
    writeFileSync(file, JSON.stringify(schema, null, 2));
    const notStructural = tessera(["generate"], project);
    assert.equal(notStructural.status, 2);
    assert.match(notStructural.out, /not structural[\s\S]*\.properties\.spec\.properties\.amount: no type/);
  });
});
