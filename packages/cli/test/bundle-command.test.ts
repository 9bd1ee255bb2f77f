// `tessera bundle` on small compiled projects (the generated-project tests
// bundle and run a whole operator): one module that runs, the lazy import
// kept lazy, and the errors a user meets.
import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CliError, runBundle } from "../src/index.js";

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "tessera-bundle-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

describe("tessera bundle", function () {
  this.timeout(30_000);

  it("writes dist/main.mjs, one module that runs, evaluating a dynamic import only when it is reached", async () => {
    const dir = project({
      "dist/src/main.js": [
        'import { greet } from "./greet.js";',
        "console.log(greet());",
        'if (process.argv[2] === "lazy") console.log((await import("./lazy.js")).value);',
      ].join("\n"),
      "dist/src/greet.js": 'export const greet = () => "hello";',
      "dist/src/lazy.js": 'console.log("lazy evaluated");\nexport const value = 42;',
    });
    const { out, bytes } = await runBundle({ dir });
    assert.equal(out, join(dir, "dist/main.mjs"));
    assert.ok(bytes > 0);
    assert.match(readFileSync(out, "utf8"), /lazy evaluated/, "the dynamic import's code is in the bundle");
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [out, ...args], { encoding: "utf8", cwd: tmpdir() }).stdout;
    assert.equal(run(), "hello\n", "the module imported on demand is not evaluated at start");
    assert.equal(run("lazy"), "hello\nlazy evaluated\n42\n");
  });

  it("says to compile first when the entry point is missing", async () => {
    const dir = project({ "package.json": "{}" });
    await assert.rejects(runBundle({ dir }), (error: unknown) => {
      assert.ok(error instanceof CliError);
      assert.match(
        error.message,
        /dist\/src\/main\.js does not exist: compile the project first \(npm run build\)/,
      );
      assert.equal(error.exitCode, 2);
      return true;
    });
  });

  it("names the file and line esbuild could not resolve", async () => {
    const dir = project({ "dist/src/main.js": 'import "./missing.js";\n' });
    await assert.rejects(runBundle({ dir }), (error: unknown) => {
      assert.ok(error instanceof CliError);
      assert.match(
        error.message,
        /esbuild could not bundle dist\/src\/main\.js:\n {2}dist\/src\/main\.js:1: Could not resolve "\.\/missing\.js"/,
      );
      assert.equal(error.exitCode, 1);
      return true;
    });
  });
});
