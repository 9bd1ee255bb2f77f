/** One thing wrong with a configuration: where, what was expected, what was found, and who set it. */
export interface ConfigViolation {
  /** The JSON pointer of the field, e.g. `/leaderElection/leaseDurationMs`. */
  readonly path: string;
  /** What the field must be, e.g. `an integer >= 1000`. */
  readonly expected: string;
  /** What it was, as JSON (`"abc"`, `12`), or `an unknown field`. */
  readonly found: string;
  /** Where the value came from: `code`, the file's path, or the environment variable's name. */
  readonly source: string;
}

/**
 * Invalid manager configuration: every violation at once, one per line, so
 * an operator fixes them in one go. `exitCode` is 2, what `runMain` exits
 * with (the convention for usage errors), so a crash-looping pod's status
 * tells a bad config from a crash.
 */
export class ConfigError extends Error {
  override name = "ConfigError";
  readonly exitCode = 2;

  constructor(readonly violations: readonly ConfigViolation[]) {
    super(
      `invalid configuration (${violations.length} problem${violations.length === 1 ? "" : "s"}):\n` +
        violations
          .map((v) => `  ${v.path || "/"}: expected ${v.expected}, found ${v.found} (from ${v.source})`)
          .join("\n"),
    );
  }
}
