import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { CliError } from "./cli-error.js";

/**
 * The templates directory: `templates/` inside the installed package (copied
 * there when it is packed), else the repository's top-level `templates/`.
 */
export function templatesDir(): string {
  const here = dirname(fileURLToPath(import.meta.url)); // dist/src
  // In a checkout, the top-level templates/ (a packed copy may be stale).
  const repo = resolve(here, "../../../..");
  if (existsSync(join(repo, "packages/cli/package.json")) && existsSync(join(repo, "templates/operator"))) {
    return join(repo, "templates");
  }
  const packed = resolve(here, "../../templates");
  if (existsSync(join(packed, "operator"))) return packed;
  throw new CliError("the templates are missing from @tessera/cli (no templates/operator); reinstall it", 1);
}

const CONDITION = /\.(sharded|leader|helm|npm|pnpm)$/;

/** Files whose names npm would drop or mangle when packing, stored under another name. */
const RENAMED: Record<string, string> = {
  gitignore: ".gitignore",
  dockerignore: ".dockerignore",
  "mocharc.json": ".mocharc.json",
};

/**
 * Renders every file under `source` into `target`: `__NAME__`-style tokens
 * are replaced in names and contents; a file ending `.<flag>` (`.sharded`,
 * `.leader`, `.helm`, `.npm`, `.pnpm`, stacked as in `.sharded.helm`) is written, without the
 * suffixes, only when `flags` has every one of them. Returns the paths
 * written, relative to `target`. Refuses to overwrite an existing file unless
 * `overwrite`.
 */
export function renderTemplates(
  source: string,
  target: string,
  vars: Record<string, string>,
  flags: ReadonlySet<string>,
  overwrite: boolean,
): string[] {
  const written: string[] = [];
  const walk = (from: string, rel: string) => {
    for (const entry of readdirSync(from, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const src = join(from, entry.name);
      let name = substitute(RENAMED[entry.name] ?? entry.name, vars);
      if (entry.isDirectory()) {
        walk(src, join(rel, name));
        continue;
      }
      // Conditions stack: `hpa.yaml.sharded.helm` needs both flags.
      let wanted = true;
      for (let m = CONDITION.exec(name); m; m = CONDITION.exec(name)) {
        wanted &&= flags.has(m[1]!);
        name = name.slice(0, -m[0].length);
      }
      if (!wanted) continue;
      const out = join(target, rel, name);
      if (existsSync(out) && !overwrite) {
        throw new CliError(
          `${out} exists; it was not created by this command, so it is left alone (use --force to overwrite)`,
        );
      }
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, substitute(readFileSync(src, "utf8"), vars));
      written.push(join(rel, name));
    }
  };
  walk(source, "");
  return written;
}

/** Replaces each `__KEY__` of `vars`; an unknown `__TOKEN__` left behind is a template bug. */
export function substitute(text: string, vars: Record<string, string>): string {
  return text.replace(/__([A-Z][A-Z_]*(?::[a-z-]+)?)__/g, (token, key: string) => vars[key] ?? token);
}
