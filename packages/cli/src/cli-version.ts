import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * This CLI's own version, from its package.json: a project it scaffolds
 * from the registry names `@tessera` at `^` this version, so the packages it
 * installs match the CLI that wrote it.
 */
export function cliVersion(): string {
  const file = join(dirname(fileURLToPath(import.meta.url)), "../../package.json"); // from dist/src
  return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
}
