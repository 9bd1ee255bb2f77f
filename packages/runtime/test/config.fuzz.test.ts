import { strict as assert } from "node:assert";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import {
  ConfigError,
  configEnvironmentVariables,
  loadConfig,
  managerConfigSchema,
  type ManagerConfig,
} from "../src/config.js";
import { fuzz } from "@tessera/core/testing/fuzz";

// The manager configuration comes from code, a YAML or JSON file an operator
// edits, and TESSERA_* variables: whatever they hold, loadConfig returns a
// whole configuration or throws one ConfigError whose violations name each bad
// field and where it came from; never a TypeError.

const dir = mkdtempSync(join(tmpdir(), "tessera-config-fuzz-"));
const noNamespaceFile = join(dir, "absent-namespace");
const KNOWN = Object.keys(managerConfigSchema.properties);

function loadOrRefuse(options: Parameters<typeof loadConfig>[0]): ManagerConfig | ConfigError {
  try {
    const config = loadConfig({ env: {}, namespaceFile: noNamespaceFile, ...options });
    assert.equal(typeof config.name, "string");
    assert.ok(Number.isInteger(config.leaderElection.leaseDurationMs));
    assert.ok(config.leaderElection.renewDeadlineMs < config.leaderElection.leaseDurationMs);
    assert.equal(Object.getPrototypeOf(config), Object.prototype);
    return config;
  } catch (error) {
    assert.ok(error instanceof ConfigError, `not a ConfigError: ${String((error as Error)?.stack ?? error)}`);
    assert.equal(error.exitCode, 2);
    assert.ok(error.violations.length > 0);
    for (const v of error.violations) {
      for (const part of [v.expected, v.found, v.source])
        assert.ok(typeof part === "string" && part !== "", JSON.stringify(v));
      assert.ok(v.path === "" || v.path.startsWith("/"), v.path);
      assert.ok(error.message.includes(`${v.path || "/"}: expected ${v.expected}`));
    }
    return error;
  }
}

/** Keys that are fields, near misses, and the ones JavaScript gives a meaning to. */
const key = fc.oneof(
  fc.constantFrom(...KNOWN, "__proto__", "constructor", "prototype", "toString", "Name", "leaderelection"),
  fc.string({ maxLength: 8 }),
);
const value = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom("", "leader", "gzip", ":8080", "0", 1e300, -1, 1.5, 2 ** 53, 1024, 65536),
);
const configObject: fc.Arbitrary<Record<string, unknown>> = fc.dictionary(
  key,
  fc.oneof(
    value,
    fc.dictionary(key, value, { maxKeys: 4 }),
    fc.dictionary(key, fc.dictionary(key, value, { maxKeys: 3 }), { maxKeys: 2 }),
  ),
  { maxKeys: 5 },
);

/** Each own key that is no field of the configuration is named by a violation. */
function unknownKeysNamed(object: unknown, result: ManagerConfig | ConfigError): void {
  if (object === null || typeof object !== "object" || Array.isArray(object)) return;
  const unknown = Object.keys(object).filter(
    (k) => !KNOWN.includes(k) && (object as Record<string, unknown>)[k] !== undefined,
  );
  if (unknown.length === 0) return;
  assert.ok(result instanceof ConfigError, `unknown fields ${JSON.stringify(unknown)} were accepted`);
  for (const k of unknown) {
    assert.ok(
      result.violations.some((v) => v.path === `/${k}`),
      `no violation names /${k}: ${result.message}`,
    );
  }
}

let files = 0;
function writeFile(text: string): string {
  const path = join(dir, `config-${files++}.yaml`);
  writeFileSync(path, text);
  return path;
}

const validYaml = fc
  .record({
    name: fc.constantFrom("widgets", "a-b"),
    mode: fc.constantFrom("leader", "sharded"),
    lease: fc.integer({ min: 15_000, max: 60_000 }),
    slots: fc.constantFrom(64, 256),
  })
  .map(
    ({ name, mode, lease, slots }) =>
      `name: ${name}\nmode: ${mode}\nleaderElection:\n  leaseDurationMs: ${lease}\nsharding:\n  slots: ${slots}\ncontrollers:\n  widget:\n    concurrency: 4\n`,
  );
const damagedYaml = fc
  .record({
    text: validYaml,
    at: fc.nat(),
    ch: fc.constantFrom(..."\n :-{}[]'\"&*!|>#%@`\t", "\u00a0", "__proto__: {}\n", "<<: *a\n"),
  })
  .map(({ text, at, ch }) => {
    const i = at % (text.length + 1);
    return text.slice(0, i) + ch + text.slice(i + 1);
  });

describe("manager configuration (fuzz)", () => {
  it("arbitrary objects in code: a configuration, or a ConfigError naming each unknown field", () => {
    fuzz(
      "config: arbitrary objects in code",
      configObject,
      (config) => unknownKeysNamed(config, loadOrRefuse({ config })),
      // Each load compiles the schema (about 8 ms): few runs keep the file near 3 s.
      150,
    );
  });

  it("arbitrary and damaged YAML files: a configuration, or a ConfigError naming the file", () => {
    fuzz(
      "config: arbitrary and damaged YAML files",
      fc.oneof(
        fc.string(),
        validYaml,
        damagedYaml,
        configObject.map((o) => JSON.stringify(o)),
        fc.jsonValue().map((o) => JSON.stringify(o)),
      ),
      (text) => {
        const file = writeFile(text);
        const result = loadOrRefuse({ file });
        if (result instanceof ConfigError) {
          assert.ok(
            result.violations.some(
              (v) => v.source === file || v.source === "code" || v.source === "the default",
            ),
          );
        }
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          return;
        }
        unknownKeysNamed(parsed, result);
      },
      120,
    );
  });

  it("arbitrary TESSERA_* values: a configuration, or a ConfigError naming the variable", () => {
    const names = [...configEnvironmentVariables().keys()];
    fuzz(
      "config: arbitrary environment",
      fc.dictionary(
        fc.constantFrom(...names),
        fc.oneof(
          fc.string(),
          fc.jsonValue().map((v) => JSON.stringify(v)),
          fc.constantFrom("1e3", " 15000 ", "-0", "99999999999999999999"),
        ),
        { maxKeys: 4 },
      ),
      (env) => {
        const result = loadOrRefuse({ env });
        if (result instanceof ConfigError) {
          const sources = new Set(result.violations.map((v) => v.source));
          for (const s of sources) assert.ok(s in env || s === "the default" || s === "code", s);
        }
      },
      150,
    );
  });
});

// Counterexample the fuzz targets found (shrunk), kept as an example: a `__proto__` key was merged
// into Object.prototype, so one line of a config file changed every object in the process.
describe("manager configuration (found by fuzzing)", () => {
  it("refuses a __proto__ key as an unknown field and leaves Object.prototype alone", () => {
    for (const options of [
      { file: writeFile('{"__proto__": {"polluted": 1}}') },
      { config: JSON.parse('{"__proto__": {"polluted": 1}}') as never },
      { env: { TESSERA_CONTROLLERS: '{"__proto__": {"polluted": 1}}' } },
    ]) {
      try {
        loadConfig({ env: {}, namespaceFile: noNamespaceFile, ...options });
      } catch (error) {
        assert.ok(error instanceof ConfigError, String(error));
      }
      assert.equal(({} as Record<string, unknown>)["polluted"], undefined);
    }
    assert.throws(
      () =>
        loadConfig({ file: writeFile("__proto__:\n  name: x\n"), env: {}, namespaceFile: noNamespaceFile }),
      (e: unknown) => e instanceof ConfigError && e.violations.some((v) => v.path === "/__proto__"),
    );
  });
});
