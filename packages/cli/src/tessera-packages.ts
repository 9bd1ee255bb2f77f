import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { copyFileSync, existsSync, mkdirSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { CliError } from "./cli-error.js";

const run = promisify(execFile);

/** The @tessera packages an operator project installs, in dependency order. */
export const TESSERA_PACKAGES = [
  "core",
  "client",
  "reflector",
  "informers",
  "workqueue",
  "leader-election",
  "sharding",
  "runtime",
  "testenv",
  "cli",
] as const;

/** Where @tessera comes from: the registry at a semver range, or tarballs in the project. */
export type TesseraSource =
  { type: "registry"; range: string } | { type: "tarballs"; files: Map<string, string> };

/** The Tessera repository this CLI runs from, if it runs from a checkout (not an installed package). */
export function tesseraCheckout(): string | undefined {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..");
  return existsSync(join(root, "packages/runtime/package.json")) && existsSync(join(root, "templates"))
    ? root
    : undefined;
}

/**
 * Packs every @tessera package of the checkout at `repo` (built first with
 * `npm run build` there) into `<project>/vendor/tessera/`, or, when `from` is
 * a directory of tarballs already, copies nothing and uses them. Returns
 * package -> path relative to the project, as `file:` specs take it.
 */
export async function packTessera(
  from: string,
  project: string,
  log: (line: string) => void,
): Promise<Map<string, string>> {
  const dest = join(project, "vendor/tessera");
  mkdirSync(dest, { recursive: true });
  const isCheckout = existsSync(join(from, "packages/runtime/package.json"));
  const files = new Map<string, string>();
  for (const name of TESSERA_PACKAGES) {
    if (isCheckout) {
      const dir = join(from, "packages", name);
      if (!existsSync(join(dir, "dist/src/index.js"))) {
        throw new CliError(`${dir} is not built: run \`npm run build\` in ${from} first`);
      }
      log(`@tessera/${name}`);
      let stdout: string;
      try {
        ({ stdout } = await run("npm", ["pack", "--silent", "--pack-destination", dest], { cwd: dir }));
      } catch (err) {
        throw new CliError(
          `npm pack in ${dir} failed:\n${(err as { stderr?: string }).stderr ?? String(err)}`,
          1,
        );
      }
      const tarball = stdout.trim().split("\n").pop()!;
      files.set(name, relative(project, join(dest, tarball)));
    } else {
      const match = readdirSync(from).find((f) => new RegExp(`^tessera-${name}-\\d.*\\.tgz$`).test(f));
      if (!match) {
        throw new CliError(
          `${from} has no tarball of @tessera/${name} (tessera-${name}-<version>.tgz); pass a Tessera checkout or a directory of all ${TESSERA_PACKAGES.length} tarballs`,
        );
      }
      copyFileSync(join(from, match), join(dest, match));
      files.set(name, relative(project, join(dest, match)));
    }
  }
  return files;
}
