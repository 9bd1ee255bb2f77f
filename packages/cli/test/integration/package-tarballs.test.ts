// What each published package would put on the registry, read from
// `npm publish --dry-run --json` (the file list npm itself computes, prepack
// scripts run; no warning from npm): the metadata a registry page and npm's warnings look for,
// no tests, build info or TypeScript sources, every entry point inside its
// own tarball, and every package its code imports declared as a dependency.
import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { importedPackages } from "../../src/project-dependencies.js";

const repo = join(dirname(fileURLToPath(import.meta.url)), "../../../../..");

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  description?: string;
  keywords?: string[];
  license?: string;
  repository?: { type?: string; url?: string; directory?: string };
  engines?: { node?: string };
  files?: string[];
  main?: string;
  types?: string;
  bin?: Record<string, string>;
  exports?: Record<string, { types?: string; default?: string }>;
  publishConfig?: { access?: string };
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

interface Packed {
  dir: string;
  manifest: Manifest;
  files: Set<string>;
  warnings: string[];
}

/**
 * `npm publish --dry-run --json` in `dir`: the tarball's paths, and what npm
 * warned about (a field it had to correct, a missing one). Offline, to a
 * registry that is never reached, with a placeholder token so that npm does
 * not warn about the login a real publish needs.
 */
function dryRunPublish(dir: string, userconfig: string): Promise<{ files: Set<string>; warnings: string[] }> {
  return new Promise((resolve, reject) => {
    const registry = "http://127.0.0.1:9/";
    writeFileSync(userconfig, `${registry.slice("http:".length)}:_authToken=dry-run\n`);
    const child = spawn(
      "npm",
      ["publish", "--dry-run", "--json", "--offline", "--registry", registry, "--userconfig", userconfig],
      { cwd: dir, stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    let err = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString()));
    child.stderr.on("data", (b: Buffer) => (err += b.toString()));
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`npm publish --dry-run in ${dir} failed (${code}):\n${err}`));
      const result = JSON.parse(out.slice(out.indexOf("{"))) as Record<string, { files: { path: string }[] }>;
      const [only] = Object.values(result);
      resolve({
        files: new Set(only!.files.map((f) => f.path)),
        warnings: err.split("\n").filter((line) => /^npm (warn|err)/i.test(line)),
      });
    });
  });
}

describe("the published packages' tarballs", function () {
  this.timeout(5 * 60_000);
  const packed: Packed[] = [];

  before(async () => {
    const dirs = readdirSync(join(repo, "packages"))
      .map((d) => join(repo, "packages", d))
      .filter((d) => existsSync(join(d, "package.json")));
    const manifests = dirs.map((dir) => ({
      dir,
      manifest: JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest,
    }));
    const userconfig = join(mkdtempSync(join(tmpdir(), "tessera-dry-run-")), ".npmrc");
    for (const { dir, manifest } of manifests.filter((m) => !m.manifest.private)) {
      // One at a time: @tessera/cli's prepack copies the templates in and out.
      packed.push({ dir, manifest, ...(await dryRunPublish(dir, userconfig)) });
    }
  });

  it("covers every package, create-tessera among them", () => {
    const names = packed.map((p) => p.manifest.name).sort();
    assert.ok(names.includes("create-tessera"), names.join(", "));
    assert.ok(names.includes("@tessera/cli"), names.join(", "));
    assert.ok(names.length >= 11, names.join(", "));
  });

  it("have what a registry page and npm publish look for, and npm publish warns of nothing", () => {
    for (const { dir, manifest: m, warnings } of packed) {
      const where = `${m.name} (${dir})`;
      assert.deepEqual(warnings, [], `${where}: npm publish --dry-run warned`);
      assert.ok(m.description && m.description.length > 20, `${where}: description`);
      assert.ok(m.keywords?.includes("kubernetes"), `${where}: keywords`);
      assert.equal(m.license, "Apache-2.0", `${where}: license`);
      assert.equal(m.engines?.node, ">=22", `${where}: engines.node`);
      assert.match(m.repository?.url ?? "", /^git\+https:\/\/.+\.git$/, `${where}: repository.url`);
      assert.equal(m.repository?.directory, dir.slice(repo.length + 1), `${where}: repository.directory`);
      assert.ok(m.files?.length, `${where}: files`);
      if (m.name.startsWith("@"))
        assert.equal(m.publishConfig?.access, "public", `${where}: publishConfig.access`);
      for (const [entry, target] of Object.entries(m.exports ?? {})) {
        assert.ok(target.types && target.default, `${where}: exports["${entry}"] has types and default`);
      }
      assert.ok(m.exports?.["."], `${where}: exports["."]`);
      for (const [bin, path] of Object.entries(m.bin ?? {})) {
        // npm publish rewrites "./x" and warns that it "was invalid".
        assert.ok(!path.startsWith("./"), `${where}: bin ${bin} is ${path}, which npm publish rewrites`);
      }
    }
  });

  it("hold no tests, build info, TypeScript sources or maintenance scripts, and a README and the license", () => {
    for (const { manifest: m, files } of packed) {
      assert.ok(files.has("README.md"), `${m.name}: README.md`);
      assert.ok(files.has("LICENSE"), `${m.name}: LICENSE (the Apache-2.0 text its "license" field names)`);
      assert.ok(files.has("package.json"), `${m.name}: package.json`);
      // templates/ is what `tessera new` writes: its test/ and .ts files are the project's.
      for (const path of [...files].filter((p) => !p.startsWith("templates/"))) {
        assert.doesNotMatch(path, /(^|\/)test\//, `${m.name}: ${path} is a test`);
        assert.doesNotMatch(path, /\.tsbuildinfo$/, `${m.name}: ${path} is build info`);
        assert.doesNotMatch(path, /(^|\/)examples\//, `${m.name}: ${path} is a README example`);
        assert.doesNotMatch(path, /generate-kube-mod\.sh$/, `${m.name}: ${path} is a maintainer's script`);
        assert.ok(
          !path.endsWith(".ts") || path.endsWith(".d.ts"),
          `${m.name}: ${path} is a TypeScript source (only dist/ is published)`,
        );
      }
    }
  });

  it("resolve every entry point (exports, main, types, bin) inside their own tarball", () => {
    for (const { manifest: m, files } of packed) {
      const targets = [
        m.main,
        m.types,
        ...Object.values(m.bin ?? {}),
        ...Object.values(m.exports ?? {}).flatMap((t) => [t.types, t.default]),
      ].filter((t): t is string => t !== undefined);
      for (const target of targets) {
        const path = target.replace(/^\.\//, "");
        assert.ok(files.has(path), `${m.name}: ${target} is not in its tarball`);
      }
    }
  });

  it("declare every package their published code imports", () => {
    for (const { dir, manifest: m, files } of packed) {
      const declared = new Set([
        m.name,
        ...Object.keys(m.dependencies ?? {}),
        ...Object.keys(m.peerDependencies ?? {}),
      ]);
      for (const path of files) {
        if (!path.endsWith(".js") || !path.startsWith("dist/")) continue;
        // Comments may quote an import (project-dependencies.js does); only code counts.
        const code = readFileSync(join(dir, path), "utf8")
          .replace(/\/\*[\s\S]*?\*\//g, "")
          .replace(/^\s*\/\/.*$/gm, "")
          // A line that is a string holding an import (generated code, as webhook-test-scaffold.js writes it) is not one.
          .replace(/^\s*(['"`])import\b.*\1,?\s*$/gm, "");
        // Template literals of generated code (`from "${specifier}"`) are not imports.
        const names = [...importedPackages(code)].filter((n) => !n.includes("${"));
        for (const name of names) {
          assert.ok(declared.has(name), `${m.name}: ${path} imports ${name}, which is not a dependency`);
        }
      }
    }
  });

  it("ship the templates inside @tessera/cli, under names npm keeps", () => {
    const cli = packed.find((p) => p.manifest.name === "@tessera/cli")!;
    for (const path of [
      "templates/operator/package.json",
      "templates/operator/gitignore",
      "templates/operator/src/main.ts",
      "templates/api/schemas/__SINGULAR__.schema.json",
    ]) {
      assert.ok(cli.files.has(path), `@tessera/cli's tarball has ${path}`);
    }
  });
});
