import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { CliError } from "./cli-error.js";
import { CONTROLLER_LIST, CONTROLLER_LIST_MODULE } from "./reconciler-classes.js";

/**
 * The text of the project's `src/controllers/index.ts` with `className`
 * (exported by `./<module>.js`) imported and appended to the list; the whole
 * module when the project has none yet. Throws, naming the lines to write by
 * hand, when the module does not hold an `export const reconcilers = [...]`
 * to add to.
 */
export function withReconcilerListed(dir: string, className: string, module: string): string {
  return withListed(
    dir,
    {
      module: CONTROLLER_LIST_MODULE,
      list: CONTROLLER_LIST,
      header: [
        "// The operator's reconcilers, listed once: main.ts registers each one, and",
        "// `tessera generate` derives the RBAC from what each declares.",
      ],
    },
    className,
    module,
  );
}

/** A module that lists what the operator registers: where it is, the list's name, the comment of a new one. */
export interface ListModule {
  /** Relative to the project, e.g. `src/webhooks/index.ts`. */
  readonly module: string;
  readonly list: string;
  readonly header: readonly string[];
}

/**
 * The text of `of.module` with `name` (exported by `./<module>.js`) imported
 * and appended to its `export const <list> = [...]`; the whole module when
 * the project has none yet. Throws, naming the lines to write by hand, when
 * the module does not hold the list to add to.
 */
export function withListed(dir: string, of: ListModule, name: string, module: string): string {
  const file = join(dir, of.module);
  return listAppended(existsSync(file) ? readFileSync(file, "utf8") : undefined, of, name, module);
}

/** What {@link withListed} does, on the module's text (undefined: there is none yet). */
export function listAppended(text: string | undefined, of: ListModule, name: string, module: string): string {
  const importLine = `import { ${name} } from "./${module}.js";`;
  const className = name;
  if (text === undefined) {
    return [...of.header, importLine, "", `export const ${of.list} = [${name}] as const;`, ""].join("\n");
  }
  const list = new RegExp(`export const ${of.list}\\b[^=]*=\\s*\\[([^\\]]*)\\]`).exec(text);
  if (!list) {
    throw new CliError(
      `${of.module} has no \`export const ${of.list} = [...]\` to add ${className} to; nothing was written. ` +
        `List it there yourself:\n  ${importLine}\n  export const ${of.list} = [..., ${className}];\nthen run this again.`,
    );
  }
  const items = list[1]!;
  const start = list.index + list[0].length - 1 - items.length; // after the "["
  let newItems: string;
  if (items.trim() === "") newItems = className;
  else if (items.includes("\n")) {
    // One per line, as prettier writes a long list: the new line indented as the last one.
    const indent = /\n([ \t]*)\S[^\n]*\s*$/.exec(items)?.[1] ?? "  ";
    const body = items.replace(/\s*$/, "");
    newItems = `${body}${body.endsWith(",") ? "" : ","}\n${indent}${className},\n`;
  } else newItems = `${items.replace(/[\s,]*$/, "")}, ${className}`;
  const updated = text.slice(0, start) + newItems + text.slice(start + items.length);
  // After the last import, else just before the list.
  const imports = [...updated.matchAll(/^import\s[^;]*;[^\n]*$/gm)];
  const last = imports[imports.length - 1];
  const at = last ? last.index + last[0].length : updated.lastIndexOf("\n", list.index) + 1;
  return last
    ? `${updated.slice(0, at)}\n${importLine}${updated.slice(at)}`
    : `${updated.slice(0, at)}${importLine}\n\n${updated.slice(at)}`;
}
