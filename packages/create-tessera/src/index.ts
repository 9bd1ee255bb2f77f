/**
 * create-tessera: what `npm create tessera` runs. It is `tessera new` of
 * `@tessera/cli`, the same code with the same flags and rules (it prompts only
 * on a terminal, never under CI or with `--yes`), so a project made either
 * way is the same project.
 */
import { runTessera } from "@tessera/cli";

/**
 * Runs `tessera new` with `args` (`my-operator --sharded --kind Tenant`) and
 * returns its exit code (0, 1 for a failure, 2 for a usage error).
 */
export function createTessera(args: readonly string[]): Promise<number> {
  return runTessera(["new", ...args], "create-tessera");
}
