import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { CliError } from "./cli-error.js";

/**
 * Compiles a project with its own TypeScript (`tsc -p tsconfig.json`), so the
 * compiler is the version the project pins. Throws a {@link CliError} with
 * tsc's output when it does not compile.
 */
export function compileProject(dir: string): void {
  let tsc: string;
  try {
    tsc = createRequire(join(dir, "package.json")).resolve("typescript/bin/tsc");
  } catch {
    throw new CliError(`typescript is not installed in ${dir}: run npm install first`);
  }
  const result = spawnSync(process.execPath, [tsc, "-p", join(dir, "tsconfig.json")], {
    cwd: dir,
    encoding: "utf8",
  });
  if (result.status !== 0) {
    throw new CliError(`the project does not compile:\n${(result.stdout + result.stderr).trim()}`, 1);
  }
}
