/** Structured attributes attached to a log line. */
export type LogFields = Record<string, unknown>;

/**
 * The structured logger every Tessera package writes to: a message that
 * says what happened, and fields that say to what (resource, verb, name) and
 * why. Adapt pino, winston or console with a few lines.
 */
export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

/** A {@link Logger} that drops everything; the default wherever no logger is given. */
export const silentLogger: Logger = Object.freeze({
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
});

/**
 * A logger that adds `fields` to every line written through it (a line's own
 * fields win on a clash), for a component that names itself once.
 */
export function withFields(logger: Logger, fields: LogFields): Logger {
  if (logger === silentLogger) return silentLogger;
  const merge = (own: LogFields | undefined): LogFields => (own ? { ...fields, ...own } : fields);
  return {
    debug: (message, own) => logger.debug(message, merge(own)),
    info: (message, own) => logger.info(message, merge(own)),
    warn: (message, own) => logger.warn(message, merge(own)),
    error: (message, own) => logger.error(message, merge(own)),
  };
}
