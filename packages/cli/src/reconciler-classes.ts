import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import type * as TS from "typescript";
import { CliError } from "./cli-error.js";

/** The module where a project lists its reconcilers, relative to the project. */
export const CONTROLLER_LIST_MODULE = "src/controllers/index.ts";
/** The name of the list it exports. */
export const CONTROLLER_LIST = "reconcilers";

/** A class in a project's source that has the reconciler's two methods. */
export interface ReconcilerClass {
  readonly name: string;
  /** Relative to the project, e.g. `src/controllers/widget.ts`. */
  readonly file: string;
  /** How its module exports it: by name, as the default export, or not (it cannot be listed before it is). */
  readonly exported: "named" | "default" | false;
}

/**
 * Every concrete class under `src/` (generated code aside) with a
 * `controller` and a `reconcile` member: what implements the reconciler
 * contract, however it is exported or whether it says `implements
 * ReconcilerPlugin`. Read with the project's own TypeScript parser.
 */
export function findReconcilerClasses(dir: string): ReconcilerClass[] {
  return findClasses(dir, (members) => members.has("controller") && members.has("reconcile"));
}

/**
 * Every concrete class under `src/` (generated code aside) whose members
 * `wanted` accepts (reconcilers, webhook plugins), however it is exported.
 * Read with the project's own TypeScript parser.
 */
export function findClasses(
  dir: string,
  wanted: (members: ReadonlySet<string>) => boolean,
): ReconcilerClass[] {
  let ts: typeof TS;
  try {
    ts = createRequire(join(dir, "package.json"))("typescript") as typeof TS;
  } catch {
    throw new CliError(`typescript is not installed in ${dir}: run npm install first`);
  }
  const found: ReconcilerClass[] = [];
  for (const file of sourceFiles(join(dir, "src"))) {
    const rel = relative(dir, file).split("\\").join("/");
    if (rel.startsWith("src/generated/")) continue;
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    // `export { A }`, `export { A as B }`, `export default A`: local name -> how it is exported.
    const exportedLater = new Map<string, "named" | "default">();
    for (const statement of source.statements) {
      if (
        ts.isExportDeclaration(statement) &&
        statement.exportClause &&
        ts.isNamedExports(statement.exportClause)
      ) {
        for (const e of statement.exportClause.elements) {
          exportedLater.set((e.propertyName ?? e.name).text, e.name.text === "default" ? "default" : "named");
        }
      }
      if (ts.isExportAssignment(statement) && ts.isIdentifier(statement.expression)) {
        exportedLater.set(statement.expression.text, "default");
      }
    }
    const visit = (node: TS.Node) => {
      if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) {
        const members = new Set(
          node.members.map((m) => (m.name && ts.isIdentifier(m.name) ? m.name.text : "")),
        );
        const modifiers = ts.canHaveModifiers(node) ? (ts.getModifiers(node) ?? []) : [];
        const abstract = modifiers.some((m) => m.kind === ts.SyntaxKind.AbstractKeyword);
        const name =
          node.name?.text ??
          (ts.isVariableDeclaration(node.parent) && ts.isIdentifier(node.parent.name)
            ? node.parent.name.text
            : undefined);
        if (name && !abstract && wanted(members)) {
          const exportKeyword = modifiers.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
          const defaultKeyword = modifiers.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword);
          const statement = ts.isVariableDeclaration(node.parent) ? node.parent.parent?.parent : undefined;
          const exportedVariable =
            statement !== undefined &&
            ts.isVariableStatement(statement) &&
            (ts.getModifiers(statement) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
          found.push({
            name,
            file: rel,
            exported:
              exportKeyword || exportedVariable
                ? defaultKeyword
                  ? "default"
                  : "named"
                : (exportedLater.get(name) ?? false),
          });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/** The import a list module (`src/controllers/index.ts`, `src/webhooks/index.ts`) needs for a class it leaves out. */
export function importStatementIn(listModule: string, c: ReconcilerClass): string {
  const from = relative(dirname(listModule), c.file.replace(/\.tsx?$/, ".js"))
    .split("\\")
    .join("/");
  const specifier = from.startsWith(".") ? from : `./${from}`;
  return c.exported === "default"
    ? `import ${c.name} from "${specifier}";`
    : `import { ${c.name} } from "${specifier}";`;
}

/**
 * Throws a {@link CliError} naming each reconciler class of the project that
 * `listed` (the names of the listed classes) leaves out, with its file and
 * the lines that list it. Returns, for the listed classes found, the file
 * each is in.
 */
export function checkEveryReconcilerListed(
  dir: string,
  listed: readonly string[],
): ReadonlyMap<string, string> {
  const classes = findReconcilerClasses(dir);
  // By name: two reconciler classes of one name in one project would be listed under an alias anyway.
  const missing = classes.filter((c) => !listed.includes(c.name));
  if (missing.length > 0) {
    const one = missing.length === 1;
    const imports = missing.map((c) => importStatementIn(CONTROLLER_LIST_MODULE, c));
    throw new CliError(
      `${one ? "a reconciler is" : `${missing.length} reconcilers are`} not listed in ${CONTROLLER_LIST_MODULE}, ` +
        `so the operator would not run ${one ? "it" : "them"} and generate would grant ${one ? "it" : "them"} no RBAC:\n` +
        missing
          .map(
            (c) =>
              `  ${c.file}: class ${c.name} has controller() and reconcile() methods` +
              (c.exported ? "" : ", and its module does not export it (export it)"),
          )
          .join("\n") +
        `\nList ${one ? "it" : "them"} in ${CONTROLLER_LIST_MODULE}:\n` +
        imports.map((line) => `  ${line}\n`).join("") +
        `  export const ${CONTROLLER_LIST} = [${[...listed, ...missing.map((c) => c.name)].join(", ")}];\n` +
        `(A class that is not a reconciler to run, such as a base class, can be made abstract instead.)`,
    );
  }
  return new Map(classes.map((c) => [c.name, c.file]));
}

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return sourceFiles(path);
      return /\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : [];
    });
}
