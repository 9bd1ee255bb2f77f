import { existsSync, readFileSync } from "node:fs";
import { createRequire, isBuiltin } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CliError } from "./cli-error.js";

// `from "x"`, `import "x"`, `import("x")`, `require("x")`: every way a module names another.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)["']([^"'\n]+)["']/g;

/**
 * The packages that TypeScript or JavaScript `source` imports by a bare
 * specifier (types included, Node's built-in modules not): `@tessera/runtime`
 * for `@tessera/runtime/server`, `ajv` for `ajv/dist/runtime/equal`. Meant
 * for the code the CLI writes (templates and generated modules), whose
 * imports are plain.
 */
export function importedPackages(source: string): Set<string> {
  const packages = new Set<string>();
  for (const match of source.matchAll(SPECIFIER)) {
    const specifier = match[1]!;
    if (specifier.startsWith(".") || specifier.startsWith("/") || isBuiltin(specifier)) continue;
    const parts = specifier.split("/");
    packages.add(specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!);
  }
  return packages;
}

/**
 * The semver range a generated project names a package other than @tessera
 * by: the one @tessera itself depends on (the CLI's package.json, then
 * @tessera/runtime's), so the project shares one copy with it. Throws when
 * neither names it: generated code must import only what Tessera ships with.
 */
export function tesseraDependencyRange(pkg: string): string {
  const manifests = [join(dirname(fileURLToPath(import.meta.url)), "../../package.json")];
  try {
    // The runtime's entry is <root>/dist/src/index.js; its package.json is the first one above it.
    let at = dirname(createRequire(import.meta.url).resolve("@tessera/runtime"));
    while (!existsSync(join(at, "package.json")) && dirname(at) !== at) at = dirname(at);
    manifests.push(join(at, "package.json"));
  } catch {
    // Not installed beside the CLI: its own package.json is all there is.
  }
  for (const file of manifests) {
    if (!existsSync(file)) continue;
    const manifest = JSON.parse(readFileSync(file, "utf8")) as {
      dependencies?: Record<string, string>;
      devDependencies?: Record<string, string>;
    };
    const range = manifest.dependencies?.[pkg] ?? manifest.devDependencies?.[pkg];
    if (range) return range;
  }
  throw new CliError(
    `the generated project imports ${pkg}, which neither @tessera/cli nor @tessera/runtime depends on, so there is no version to give it: a template bug; report it`,
    1,
  );
}
