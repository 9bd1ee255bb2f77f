import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { CliError } from "./cli-error.js";
import { generate } from "./generate.js";
import { checkGroup, checkProjectName, checkVersion, kindNames, kindTokens } from "./names.js";
import { packTessera, TESSERA_PACKAGES, type TesseraSource } from "./tessera-packages.js";
import { importedPackages, tesseraDependencyRange } from "./project-dependencies.js";
import { groupKindVersions, versionNames } from "./kind-versions.js";
import { readKindSchema } from "./schema-file.js";
import { cliVersion } from "./cli-version.js";
import { kindTypeScript } from "./typescript-types.js";
import { validatorModule } from "./validator-code.js";
import { renderTemplates, templatesDir } from "./templates.js";
import { silentProgress, type Progress } from "./progress.js";
import {
  packageManager,
  PNPM_VERSION,
  type PackageManager,
  type PackageManagerName,
} from "./package-manager.js";

/** What `tessera new` is asked for. */
export interface NewProjectOptions {
  readonly dir: string;
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly mode: "leader" | "sharded";
  /** Default: the directory's name. */
  readonly name?: string;
  /** Default: the project name. */
  readonly namespace?: string;
  /** Write into a non-empty directory, overwriting what the templates name. */
  readonly force?: boolean;
  /** A Tessera checkout or a directory of packed tarballs; else the registry at `tesseraRange`. */
  readonly tesseraPackages?: string;
  /** The semver range of `@tessera` on the registry; default `^` this CLI's version. */
  readonly tesseraRange?: string;
  /** Also write a Helm chart of the same manifests under `chart/`. */
  readonly helm?: boolean;
  /** Run `npm install` and `tessera generate` (default true). */
  readonly install?: boolean;
  /** Default npm. */
  readonly packageManager?: PackageManagerName;
  /** How long steps (packing, npm install, generate) are shown; default none. */
  readonly progress?: Progress;
}

/** What `tessera new` wrote. */
export interface NewProjectResult {
  readonly dir: string;
  readonly files: string[];
}

/**
 * Scaffolds an operator project from templates/: the project files, one kind
 * (schema, reconciler, test), tessera.json; then installs its dependencies and
 * runs {@link generate}, so `npm test` passes as generated.
 */
export async function newProject(options: NewProjectOptions): Promise<NewProjectResult> {
  const progress = options.progress ?? silentProgress;
  const pm = packageManager(options.packageManager ?? "npm");
  const dir = resolve(options.dir);
  const name = options.name ?? basename(dir);
  checkProjectName(name);
  checkGroup(options.group);
  checkVersion(options.version);
  const names = kindNames(options.kind);
  const namespace = options.namespace ?? name;
  if (existsSync(dir) && readdirSync(dir).length > 0 && !options.force) {
    throw new CliError(
      `${dir} is not empty; choose a new directory, or pass --force to write the project's files into it`,
    );
  }

  const templates = templatesDir();
  const source: TesseraSource = options.tesseraPackages
    ? { type: "tarballs", files: new Map() }
    : { type: "registry", range: options.tesseraRange ?? `^${cliVersion()}` };
  if (source.type === "tarballs") {
    const from = resolve(options.tesseraPackages!);
    const packed = await progress.step(`packing @tessera from ${from} into vendor/tessera/`, (detail) =>
      packTessera(from, dir, detail),
    );
    for (const [k, v] of packed) source.files.set(k, v);
  }
  const vars: Record<string, string> = {
    ...kindTokens(name, options.group, options.version, names),
    NAMESPACE: namespace,
    MODE: options.mode,
    PM: pm.run,
    PMX: pm.exec,
    PNPM_VERSION,
    REPLICAS: options.mode === "sharded" ? "3" : "2",
    SHARDED: String(options.mode === "sharded"),
    EXTRA_RESOURCES: options.mode === "sharded" ? "\n  - horizontal-pod-autoscaler.yaml" : "",
    INSTALL_ROUTE: installRoute(source),
    ...Object.fromEntries(TESSERA_PACKAGES.map((p) => [`TESSERA:${p}`, spec(source, p)])),
  };
  const flags = new Set<string>([options.mode, pm.name, ...(options.helm ? ["helm"] : [])]);
  const files = [
    ...renderTemplates(join(templates, "operator"), dir, vars, flags, !!options.force),
    ...renderTemplates(join(templates, "api"), dir, vars, flags, !!options.force),
  ];
  const config = { name, namespace, mode: options.mode };
  writeFileSync(join(dir, "tessera.json"), JSON.stringify(config, null, 2) + "\n");
  files.push("tessera.json");
  await addImportedDependencies(dir, files, source);
  addOverrides(dir, source, pm);

  if (options.install ?? true) {
    await progress.step(`installing dependencies (${pm.name} install)`, (detail) =>
      install(dir, pm.install, detail),
    );
    const generated = await progress.step(
      "generating the CRD, types, validators and RBAC (tessera generate)",
      (detail) => generate({ dir, log: detail }),
    );
    files.push(...generated.changed);
  }
  return { dir, files: [...new Set(files)].sort() };
}

/** Installs in `dir` with `command`, its output lines passed to `detail`; kept whole for the error when it fails. */
function install(dir: string, command: readonly string[], detail: (line: string) => void): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command[0]!, command.slice(1), {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const output: string[] = [];
    const onData = (chunk: Buffer) => {
      const text = chunk.toString();
      output.push(text);
      const last = text.trim().split("\n").pop();
      if (last) detail(last);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("error", (err) =>
      reject(new CliError(`could not run ${command[0]} in ${dir}: ${err.message}`, 1)),
    );
    child.on("exit", (code) => {
      if (code === 0) return resolvePromise();
      reject(
        new CliError(
          `${command.join(" ")} failed in ${dir} (exit ${code}):\n${output.join("").trim().split("\n").slice(-20).join("\n")}\nFix what it says, then install there and run tessera generate.`,
          1,
        ),
      );
    });
  });
}

/**
 * Names in package.json every package the project's code imports, so a
 * strict layout (pnpm's) finds each: what src/ imports, including the modules
 * `tessera generate` will write there, as `dependencies`; what only test/
 * imports as `devDependencies`. The template's package.json names only tools.
 */
async function addImportedDependencies(dir: string, files: string[], source: TesseraSource): Promise<void> {
  const read = (f: string) => readFileSync(join(dir, f), "utf8");
  const src = files.filter((f) => f.startsWith("src/") && /\.tsx?$/.test(f)).map(read);
  const schemas = files
    .filter((f) => f.startsWith("schemas/") && f.endsWith(".schema.json"))
    .map((f) => readKindSchema(join(dir, f)));
  for (const kind of groupKindVersions(schemas)) {
    for (const version of kind.versions) {
      const names = versionNames(kind, version);
      src.push(await kindTypeScript(version, names), validatorModule(version, names));
    }
  }
  const test = files.filter((f) => f.startsWith("test/") && /\.tsx?$/.test(f)).map(read);
  const runtime = importedPackages(src.join("\n"));
  const testOnly = [...importedPackages(test.join("\n"))].filter((p) => !runtime.has(p));
  const range = (p: string) =>
    p.startsWith("@tessera/") ? spec(source, p.slice("@tessera/".length)) : tesseraDependencyRange(p);
  const file = join(dir, "package.json");
  const pkg = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  const add = (field: "dependencies" | "devDependencies", names: Iterable<string>) => {
    const deps = { ...(pkg[field] as Record<string, string> | undefined) };
    for (const p of names) deps[p] ??= range(p);
    pkg[field] = Object.fromEntries(Object.entries(deps).sort(([a], [b]) => a.localeCompare(b)));
  };
  add("dependencies", runtime);
  add("devDependencies", testOnly);
  writeFileSync(file, JSON.stringify(pkg, null, 2) + "\n");
}

function spec(source: TesseraSource, pkg: string): string {
  if (source.type === "registry") return source.range;
  const file = source.files.get(pkg);
  // TESSERA_PACKAGES is what is packed: a package the templates import must be in it.
  if (file === undefined) throw new CliError(`@tessera/${pkg} was not packed (not in TESSERA_PACKAGES)`, 1);
  return `file:${file}`;
}

/** The packages the project does not name itself come from the same tarballs (npm `overrides`, `pnpm.overrides`). */
function addOverrides(dir: string, source: TesseraSource, pm: PackageManager): void {
  const path = pm.overridesPath;
  if (source.type === "registry") return;
  const file = join(dir, "package.json");
  const pkg = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  const direct = new Set(
    [pkg["dependencies"], pkg["devDependencies"]].flatMap((d) =>
      Object.keys((d as object | undefined) ?? {}),
    ),
  );
  let holder = pkg;
  for (const key of path.slice(0, -1)) holder = (holder[key] ??= {}) as Record<string, unknown>;
  holder[path[path.length - 1]!] = Object.fromEntries(
    // npm refuses an override of a direct dependency (EOVERRIDE) and matches
    // the tarball to the others' "0.1.0" by version; pnpm needs them all.
    TESSERA_PACKAGES.filter((p) => pm.name === "pnpm" || !direct.has(`@tessera/${p}`)).map((p) => [
      `@tessera/${p}`,
      `file:${source.files.get(p)!}`,
    ]),
  );
  writeFileSync(file, JSON.stringify(pkg, null, 2) + "\n");
}

function installRoute(source: TesseraSource): string {
  return source.type === "registry"
    ? `From the npm registry, at \`${source.range}\` (see \`package.json\`).`
    : [
        "From tarballs packed from a Tessera checkout into `vendor/tessera/` (the",
        "packages are not published yet): `package.json` names them as `file:`",
        "dependencies, and `overrides` points the packages they depend on at the",
        "same tarballs. Once @tessera is on the registry, replace each `file:` spec",
        "with a semver range such as `^0.1.0`, drop `overrides` and `vendor/`.",
      ].join("\n");
}
