import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";

// What an idle operator loads is memory it keeps: node's modules it never
// uses cost RSS in every replica (docs/benchmarks.md, "Idle RSS").

/** The built-in modules a fresh node process has loaded once it imported @tessera/runtime. */
function loadedByImportingTheRuntime(): string[] {
  const loaded = execFileSync(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      'await import("@tessera/runtime"); console.log(JSON.stringify(process.moduleLoadList));',
    ],
    { encoding: "utf8" },
  );
  return JSON.parse(loaded) as string[];
}

describe("importing @tessera/runtime", () => {
  it("does not load undici, http2 or worker_threads (an ES import of node:http would)", () => {
    const modules = loadedByImportingTheRuntime();
    assert.ok(modules.includes("NativeModule http"), "the runtime loads node:http (check the probe)");
    for (const name of ["internal/deps/undici/undici", "http2", "worker_threads"])
      assert.ok(!modules.includes(`NativeModule ${name}`), `importing @tessera/runtime loaded ${name}`);
  });

  it("does not load fs/promises, readline, fs streams (an ES import of node:fs would) or zlib", () => {
    const modules = loadedByImportingTheRuntime();
    for (const name of ["fs/promises", "internal/readline/interface", "internal/fs/streams", "zlib"])
      assert.ok(!modules.includes(`NativeModule ${name}`), `importing @tessera/runtime loaded ${name}`);
  });
});
