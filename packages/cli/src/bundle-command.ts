import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { basename, dirname, extname, join, relative, resolve } from "node:path";
import type { BuildOptions } from "esbuild";
import { CliError } from "./cli-error.js";
import { protobufWithoutLong } from "./protobuf-without-long.js";

/** What `tessera bundle` bundles, and where to. */
export interface BundleOptions {
  /** The project's root. */
  readonly dir: string;
  /** The compiled entry point, relative to `dir`; default `dist/src/main.js`. */
  readonly entry?: string;
  /**
   * The bundle's entry module to write, relative to `dir`; default
   * `dist/main.mjs`. Its chunks go to `chunks/` beside it, and each file's
   * source map beside the file (`.map`).
   */
  readonly out?: string;
}

/** What was bundled. */
export interface BundleResult {
  /** The entry module: what `node` runs. */
  readonly out: string;
  /** The entry module's size. */
  readonly bytes: number;
  /** The directory of the chunks the entry module imports, always written (it may be empty). */
  readonly chunks: string;
  /** How many chunks were written. */
  readonly chunkCount: number;
  /** The chunks' size together, without their source maps. */
  readonly chunkBytes: number;
}

/**
 * Modules left out of the bundle and loaded from node_modules when used:
 * @kubernetes/client-node only for kubeconfigs with exec or auth-provider
 * users, which the image's in-cluster service account never has.
 */
const EXTERNAL = ["@kubernetes/client-node"];

/** Where the chunks go, beside the entry module. */
const CHUNKS = "chunks";

/**
 * esbuild's options for `tessera bundle`, writing `<outdir>/<name><ext>` and
 * its chunks under `<outdir>/chunks/`. The start-up benchmark
 * (bench/runtime/startup.js) bundles through {@link runBundle} too, so that it
 * measures what images ship.
 *
 * - Split: what is imported only on demand (the protobuf messages of each API
 *   group, the OpenTelemetry SDK and its exporter, ajv, ...) is a chunk of its
 *   own, read and parsed only when first imported, and so are the built-in
 *   modules it imports; in one file all of it is held from the start.
 * - Whitespace and syntax minified, names kept: stack traces name the
 *   functions and classes as the sources do (renaming them saved nothing
 *   measurable at idle; `keepNames` cost 0.6 to 1.6 MiB).
 * - Source maps beside each file, without the sources' text (esbuild follows
 *   tsc's maps to the TypeScript sources). Node reads them only when run with
 *   `--enable-source-maps`, which the image leaves off: the first stack trace
 *   printed with it costs about 8 MiB of RSS for good.
 * - protobufjs without long.js ({@link protobufWithoutLong}).
 *
 * Measured in docs/benchmarks.md ("A split bundle").
 */
function bundleBuildOptions(entry: string, outdir: string, name: string, ext: string): BuildOptions {
  return {
    entryPoints: [{ in: entry, out: name }],
    bundle: true,
    splitting: true,
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: "linked",
    sourcesContent: false,
    platform: "node",
    format: "esm",
    target: "node22",
    outdir,
    outExtension: { ".js": ext },
    chunkNames: `${CHUNKS}/[name]-[hash]`,
    external: EXTERNAL,
    plugins: [protobufWithoutLong],
    // Every chunk is a module of its own: each gets `require`, for the CommonJS modules it holds.
    banner: {
      js: "import { createRequire as __tesseraCreateRequire } from 'node:module'; const require = __tesseraCreateRequire(import.meta.url);",
    },
    logLevel: "silent",
  };
}

/**
 * Bundles the compiled operator into ES modules with esbuild, for the image's
 * entry point: one entry module and the chunks it imports on demand instead
 * of several hundred modules saves their per-module cost at start
 * (docs/benchmarks.md, "Protobuf messages per kind" and "A split bundle").
 * The chunks directory is the bundle's own: it is emptied first, so that no
 * chunk of an earlier build stays.
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
  const ext = extname(out);
  if (ext !== ".mjs" && ext !== ".js") {
    throw new CliError(
      `tessera bundle: --out ${relative(dir, out)} must end in .mjs (or .js in a project of "type": "module"): the bundle is ES modules`,
    );
  }
  const outdir = dirname(out);
  const chunks = join(outdir, CHUNKS);
  rmSync(chunks, { recursive: true, force: true });
  const { build } = await import("esbuild");
  const result = await build({
    ...bundleBuildOptions(entry, outdir, basename(out, ext), ext),
    absWorkingDir: dir,
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
  // An image copies the directory whether or not anything is imported on demand.
  mkdirSync(chunks, { recursive: true });
  const chunkFiles = readdirSync(chunks).filter((f) => f.endsWith(ext));
  return {
    out,
    bytes: statSync(out).size,
    chunks,
    chunkCount: chunkFiles.length,
    chunkBytes: chunkFiles.reduce((sum, f) => sum + statSync(join(chunks, f)).size, 0),
  };
}
