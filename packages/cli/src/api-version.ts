import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CliError } from "./cli-error.js";
import { compareVersions, groupKindVersions, type ApiKind } from "./kind-versions.js";
import { checkVersion } from "./names.js";
import { readKindSchema } from "./schema-file.js";

/** What {@link addApiVersion} did. */
export interface AddedVersion {
  /** Files written or renamed to, relative to the project. */
  readonly files: string[];
  /** What was renamed (`schemas/widget.schema.json` -> `schemas/widget.v1alpha1.schema.json`). */
  readonly renamed: readonly [string, string][];
  /** The kind, as its schemas now define it. */
  readonly kind: ApiKind;
}

/**
 * The project's kind named `kind` (by its `x-tessera.kind`), if its schemas
 * define one.
 */
export function findKind(dir: string, kind: string): ApiKind | undefined {
  const schemaDir = join(dir, "schemas");
  if (!existsSync(schemaDir)) return undefined;
  const schemas = readdirSync(schemaDir)
    .filter((f) => f.endsWith(".schema.json"))
    .sort()
    .map((f) => readKindSchema(join(schemaDir, f)));
  return groupKindVersions(schemas).find((k) => k.names.kind === kind);
}

/**
 * Adds `version` to an existing kind: `schemas/<kind>.<version>.schema.json`,
 * a copy of its highest version's schema (so the two are the same shape and
 * converting between them starts as a copy). A kind that had one version in
 * `schemas/<kind>.schema.json` has it renamed to `<kind>.<its version>.schema.json`
 * and marked `"storage": true`, as it was stored. With `storage`, the new
 * version becomes the stored one (the hub) instead, and the mark moves to it.
 * Schema files are edited as text, so their layout is kept.
 */
export function addApiVersion(
  dir: string,
  existing: ApiKind,
  version: string,
  storage: boolean,
): AddedVersion {
  checkVersion(version);
  const { names } = existing;
  const same = existing.versions.find((v) => v.header.version === version);
  if (same) throw new CliError(`${same.file} exists: ${names.kind} already has version ${version}`);
  const target = join(dir, "schemas", `${names.singular}.${version}.schema.json`);
  if (existsSync(target)) throw new CliError(`${target} exists; it was left alone`);

  const renamed: [string, string][] = [];
  const files: string[] = [];
  // The only version, unversioned and unmarked: named for its version and marked stored.
  if (existing.versions.length === 1) {
    const only = existing.versions[0]!;
    const versioned = join(dir, "schemas", `${names.singular}.${only.header.version}.schema.json`);
    if (only.file !== versioned) {
      renameSync(only.file, versioned);
      renamed.push([rel(dir, only.file), rel(dir, versioned)]);
    }
    if (!storage && only.header.storage !== true) {
      writeFileSync(versioned, withHeader(readFileSync(versioned, "utf8"), versioned, { storage: true }));
    }
    files.push(rel(dir, versioned));
  }
  if (storage) {
    for (const v of existing.versions) {
      const file = renamed.find(([from]) => join(dir, from) === v.file)?.[1];
      const path = file ? join(dir, file) : v.file;
      const text = readFileSync(path, "utf8");
      const unmarked = withHeader(text, path, { storage: undefined });
      if (unmarked !== text) {
        writeFileSync(path, unmarked);
        if (!files.includes(rel(dir, path))) files.push(rel(dir, path));
      }
    }
  }
  const latest = [...existing.versions].sort((a, b) =>
    compareVersions(a.header.version, b.header.version),
  )[0]!;
  const latestPath = renamed.find(([from]) => join(dir, from) === latest.file)?.[1];
  const text = readFileSync(latestPath ? join(dir, latestPath) : latest.file, "utf8");
  writeFileSync(target, withHeader(text, target, { version, storage: storage ? true : undefined }));
  files.push(rel(dir, target));
  const kind = findKind(dir, names.kind);
  if (!kind) throw new Error(`${names.kind} vanished from schemas/ while a version was added`);
  return { files, renamed, kind };
}

/**
 * The schema text with its `x-tessera` header's `version` replaced and its
 * `storage` mark set (true) or removed (undefined), leaving the rest as written.
 */
function withHeader(
  text: string,
  file: string,
  change: { version?: string; storage?: true | undefined },
): string {
  const match = /"x-tessera"\s*:\s*\{[^{}]*\}/.exec(text);
  if (!match) {
    throw new CliError(
      `${file}: no flat "x-tessera": { ... } header to edit; add the version's file by hand`,
    );
  }
  let header = match[0];
  if (change.version !== undefined)
    header = header.replace(/("version"\s*:\s*)"[^"]*"/, `$1"${change.version}"`);
  // Drop any storage mark, with the comma that joined it to its neighbour.
  header = header
    .replace(/,(\s*)"storage"\s*:\s*(true|false)(\s*)\}$/, "$3}")
    .replace(/"storage"\s*:\s*(true|false)\s*,\s*/, "");
  if (change.storage) {
    // After the version, on a line of its own when the header is one key per line.
    header = header.replace(
      /("version"\s*:\s*"[^"]*")(,?)(\s*)/,
      (_, version: string, comma: string, space: string) =>
        space.includes("\n")
          ? `${version},${space}"storage": true${comma}${space}`
          : `${version}, "storage": true${comma}${space}`,
    );
  }
  return text.slice(0, match.index) + header + text.slice(match.index + match[0].length);
}

function rel(dir: string, path: string): string {
  return path
    .slice(dir.length + 1)
    .split("\\")
    .join("/");
}
