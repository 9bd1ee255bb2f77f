// `tessera bundle` on small compiled projects (the generated-project tests
// bundle and run a whole operator): an entry module that runs, the lazy
// import kept lazy in a chunk of its own, stack traces through the source
// maps, and the errors a user meets.
import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ts from "typescript";
import { CliError, runBundle } from "../src/index.js";

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "tessera-bundle-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** What node prints when run with `args` (its flags, a bundle and the bundle's arguments) outside the project. */
function nodeStdout(args: string[]): string {
  return spawnSync(process.execPath, args, { encoding: "utf8", cwd: tmpdir() }).stdout;
}

describe("tessera bundle", function () {
  this.timeout(30_000);

  it("writes dist/main.mjs, an entry module that runs, and a chunk for a dynamic import, evaluated only when it is reached", async () => {
    const dir = project({
      "dist/src/main.js": [
        'import { greet } from "./greet.js";',
        "console.log(greet());",
        'if (process.argv[2] === "lazy") console.log((await import("./lazy.js")).value);',
      ].join("\n"),
      "dist/src/greet.js": 'export const greet = () => "hello";',
      "dist/src/lazy.js": 'console.log("lazy evaluated");\nexport const value = 42;',
    });
    const { out, bytes, chunks, chunkCount, chunkBytes } = await runBundle({ dir });
    assert.equal(out, join(dir, "dist/main.mjs"));
    assert.equal(chunks, join(dir, "dist/chunks"));
    assert.ok(bytes > 0);
    assert.equal(chunkCount, 1);
    assert.ok(chunkBytes > 0);
    const [chunk] = readdirSync(chunks).filter((f) => f.endsWith(".mjs"));
    assert.doesNotMatch(readFileSync(out, "utf8"), /lazy evaluated/, "the entry module holds no lazy code");
    assert.match(
      readFileSync(join(chunks, chunk!), "utf8"),
      /lazy evaluated/,
      "the dynamic import's code is in its chunk",
    );
    assert.ok(existsSync(`${out}.map`), "the entry module's source map is beside it");
    const run = (...args: string[]) => nodeStdout([out, ...args]);
    assert.equal(run(), "hello\n", "the module imported on demand is not evaluated at start");
    assert.equal(run("lazy"), "hello\nlazy evaluated\n42\n");
  });

  it("minifies whitespace but keeps names: stack traces name the function, and through the source maps the compiled file and line", async () => {
    const dir = project({
      "dist/src/main.js": [
        'import { failingStep } from "./steps.js";',
        "try {",
        "  failingStep();",
        "} catch (error) {",
        "  console.log(error.stack);",
        "}",
      ].join("\n"),
      "dist/src/steps.js": [
        "export function failingStep() {",
        "  const count = 1;",
        '  throw new Error("step failed " + count);',
        "}",
      ].join("\n"),
    });
    const { out } = await runBundle({ dir });
    assert.doesNotMatch(readFileSync(out, "utf8"), /\n {2}const count/, "whitespace minified");
    const run = (...flags: string[]) => nodeStdout([...flags, out]);
    assert.match(run(), /at failingStep \(file:.*\/dist\/main\.mjs:\d+:\d+\)/, "the name, without the maps");
    assert.match(run("--enable-source-maps"), /at failingStep \(.*dist\/src\/steps\.js:3:9\)/);
  });

  it("chains tsc's source maps: stack traces name the TypeScript source's file and line", async () => {
    const source = [
      "export function failingStep(): never {",
      "  const count: number = 1;",
      "  throw new Error(`step failed ${count}`);",
      "}",
    ].join("\n");
    const compiled = ts.transpileModule(source, {
      fileName: "src/steps.ts",
      compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022, sourceMap: true },
    });
    const dir = project({
      "src/steps.ts": source,
      "dist/src/main.js":
        'import { failingStep } from "./steps.js";\ntry { failingStep(); } catch (e) { console.log(e.stack); }',
      "dist/src/steps.js": compiled.outputText.replace(
        /sourceMappingURL=.*/,
        "sourceMappingURL=steps.js.map",
      ),
      "dist/src/steps.js.map": compiled.sourceMapText!.replace(
        '"sources":["steps.ts"]',
        '"sources":["../../src/steps.ts"]',
      ),
    });
    const { out } = await runBundle({ dir });
    const stdout = spawnSync(process.execPath, ["--enable-source-maps", out], {
      encoding: "utf8",
      cwd: tmpdir(),
    }).stdout;
    assert.match(stdout, /at failingStep \(.*\/src\/steps\.ts:3:9\)/);
  });

  it("leaves long.js out of protobufjs, which then reads 64-bit integers as numbers, and keeps it for the operator's own imports", async () => {
    const dir = project({
      "dist/src/main.js": [
        'import protobuf from "protobufjs/minimal.js";',
        "console.log(protobuf.util.Long === null);",
        "const reader = protobuf.Reader.create(new Uint8Array([0x80, 0x80, 0x80, 0x80, 0x10]));",
        "console.log(reader.int64());",
        'if (process.argv[2] === "long") console.log(typeof (await import("long")).default.fromNumber);',
      ].join("\n"),
    });
    // The repository's node_modules, where protobufjs and long are installed.
    const protobufjs = createRequire(import.meta.url).resolve("protobufjs/minimal.js");
    symlinkSync(
      join(protobufjs.slice(0, protobufjs.lastIndexOf("/node_modules/")), "node_modules"),
      join(dir, "node_modules"),
    );
    const { out, chunks } = await runBundle({ dir });
    assert.doesNotMatch(
      readFileSync(out, "utf8"),
      /WebAssembly/,
      "protobufjs's import of long.js is answered with nothing",
    );
    const chunkTexts = readdirSync(chunks).map((f) => readFileSync(join(chunks, f), "utf8"));
    assert.ok(
      chunkTexts.some((t) => t.includes("WebAssembly")),
      "the operator's own import of long.js is bundled, in its chunk",
    );
    const run = (...args: string[]) => nodeStdout([out, ...args]);
    assert.equal(run(), "true\n4294967296\n");
    assert.equal(
      run("long"),
      "true\n4294967296\nfunction\n",
      "the operator's own import of long still finds it",
    );
  });

  it("empties the chunks directory of an earlier build", async () => {
    const dir = project({ "dist/src/main.js": 'console.log("no lazy import");' });
    mkdirSync(join(dir, "dist/chunks"), { recursive: true });
    writeFileSync(join(dir, "dist/chunks/stale-ABCDEFGH.mjs"), "");
    const { chunks, chunkCount } = await runBundle({ dir });
    assert.equal(chunkCount, 0);
    assert.deepEqual(readdirSync(chunks), [], "written, empty, for the image to copy");
  });

  it("says the bundle is ES modules when --out ends otherwise", async () => {
    const dir = project({ "dist/src/main.js": "" });
    await assert.rejects(runBundle({ dir, out: "dist/main.cjs" }), (error: unknown) => {
      assert.ok(error instanceof CliError);
      assert.match(error.message, /--out dist\/main\.cjs must end in \.mjs .*: the bundle is ES modules/);
      assert.equal(error.exitCode, 2);
      return true;
    });
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
