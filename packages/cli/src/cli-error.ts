/**
 * A mistake the user can fix: the CLI prints its message (no stack) and exits
 * with `exitCode` (2 for bad input, 1 for a failed step).
 */
export class CliError extends Error {
  override name = "CliError";
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
  }
}
