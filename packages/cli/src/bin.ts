#!/usr/bin/env node
import { CommanderError } from "commander";
import { CliError } from "./cli-error.js";
import { buildProgram } from "./program.js";

try {
  await buildProgram().exitOverride().parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    // commander printed the message and usage already; --help and --version are not failures.
    process.exitCode = err.exitCode === 0 ? 0 : 2;
  } else if (err instanceof CliError) {
    process.stderr.write(`tessera: ${err.message}\n`);
    process.exitCode = err.exitCode;
  } else {
    process.stderr.write(`tessera: unexpected error: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 1;
  }
}
