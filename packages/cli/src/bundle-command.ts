import { existsSync, statSync } from "node:fs";
import { relative, resolve } from "node:path";
import { CliError } from "./cli-error.js";

/** What `tessera bundle` bundles, and where to. */
export interface BundleOptions {
  /** The project's root. */
  readonly dir: string;
  /** The compiled entry point, relative to `dir`; default `dist/src/main.js`. */
  readonly entry?: string;
  /** The bundle to write, relative to `dir`; default `dist/main.mjs`. */
  readonly out?: string;
}

/** What was bundled. */
export interface BundleResult {
  readonly out: string;
  readonly bytes: number;
}

/**
 * Modules left out of the bundle and loaded from node_modules when used:
 * @kubernetes/client-node only for kubeconfigs with exec or auth-provider
 * users, which the image's in-cluster service account never has.
 */
const EXTERNAL = ["@kubernetes/client-node"];

/**
 * Bundles the compiled operator into one ES module with esbuild, for the
 * image's entry point: one module instead of several hundred saves their
 * per-module cost at start (docs/benchmarks.md, "Protobuf messages per
 * kind"). Modules the runtime imports on first use (the OpenTelemetry SDK,
 * ajv, the protobuf messages of each kind) stay lazy in the bundle: their
 * code is in the file, evaluated only when first imported. `require` is
 * provided for the CommonJS modules the bundle holds.
 */
export async function runBundle(options: BundleOptions): Promise<BundleResult> {
  const dir = resolve(options.dir);
  const entry = resolve(dir, options.entry ?? "dist/src/main.js");
  const out = resolve(dir, options.out ?? "dist/main.mjs");
  if (!existsSync(entry)) {
    throw new CliError(
      `tessera bundle: ${relative(process.cwd(), entry) || entry} does not exist: compile the project first (npm run build), or name the entry point with --entry`,
    );
  }
  const { build } = await import("esbuild");
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    outfile: out,
    external: EXTERNAL,
    banner: {
      js: "import { createRequire as __tesseraCreateRequire } from 'node:module'; const require = __tesseraCreateRequire(import.meta.url);",
    },
    absWorkingDir: dir,
    logLevel: "silent",
  }).catch((error: unknown) => {
    const errors = (error as { errors?: { text: string; location?: { file: string; line: number } }[] })
      .errors;
    const lines = errors?.map((e) =>
      e.location ? `${e.location.file}:${e.location.line}: ${e.text}` : e.text,
    );
    throw new CliError(
      `tessera bundle: esbuild could not bundle ${relative(dir, entry)}:\n  ${(lines ?? [String(error)]).join("\n  ")}`,
      1,
    );
  });
  for (const warning of result.warnings) console.warn(`tessera bundle: ${warning.text}`);
  return { out, bytes: statSync(out).size };
}
