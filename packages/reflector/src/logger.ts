/** Structured attributes attached to a log line. */
export type LogFields = Record<string, unknown>;

/**
 * The structured logger the reflector writes to. Every line carries the
 * reflector's name and resource in its fields. Adapt pino, winston or console
 * with a few lines.
 */
export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

/** A {@link Logger} that drops everything; the default. */
export const silentLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
};
