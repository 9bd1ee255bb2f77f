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
  const file = join(dir, CONTROLLER_LIST_MODULE);
  const importLine = `import { ${className} } from "./${module}.js";`;
  if (!existsSync(file)) {
    return [
      "// The operator's reconcilers, listed once: main.ts registers each one, and",
      "// `tessera generate` derives the RBAC from what each declares.",
      importLine,
      "",
      `export const ${CONTROLLER_LIST} = [${className}] as const;`,
      "",
    ].join("\n");
  }
  const text = readFileSync(file, "utf8");
  const list = new RegExp(`export const ${CONTROLLER_LIST}\\b[^=]*=\\s*\\[([^\\]]*)\\]`).exec(text);
  if (!list) {
    throw new CliError(
      `${CONTROLLER_LIST_MODULE} has no \`export const ${CONTROLLER_LIST} = [...]\` to add ${className} to; nothing was written. ` +
        `List it there yourself:\n  ${importLine}\n  export const ${CONTROLLER_LIST} = [..., ${className}];\nthen run this again.`,
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
