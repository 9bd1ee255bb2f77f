import { CommanderError, type Command } from "commander";
import { CliError } from "./cli-error.js";
import { buildProgram } from "./program.js";

/**
 * Runs the `tessera` command line on `args` (the words after the command,
 * as `process.argv.slice(2)` gives them) and returns its exit code: 0, 1
 * for a failure, 2 for a usage error. Errors are printed to stderr, prefixed
 * with `name`. The `tessera` bin and `create-tessera` (which runs `new`)
 * both call it, so they share every flag and rule.
 */
export async function runTessera(args: readonly string[], name = "tessera"): Promise<number> {
  try {
    await throwInsteadOfExit(buildProgram()).parseAsync(args, { from: "user" });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // commander printed the message and usage already; --help and --version are not failures.
      return err.exitCode === 0 ? 0 : 2;
    }
    if (err instanceof CliError) {
      process.stderr.write(`${name}: ${err.message}\n`);
      return err.exitCode;
    }
    process.stderr.write(`${name}: unexpected error: ${(err as Error).stack ?? String(err)}\n`);
    return 1;
  }
}

/**
 * commander calls process.exit on a usage error unless told otherwise, and a
 * subcommand keeps the setting it was created with: set it on every one, so
 * the exit code comes back to the caller.
 */
function throwInsteadOfExit(command: Command): Command {
  command.exitOverride();
  for (const sub of command.commands) throwInsteadOfExit(sub);
  return command;
}
