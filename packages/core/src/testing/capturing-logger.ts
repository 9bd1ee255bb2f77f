import type { LogFields, Logger } from "../logger.js";

/** One line kept by a {@link CapturingLogger}. */
export interface LogLine {
  level: "debug" | "info" | "warn" | "error";
  message: string;
  fields: LogFields;
}

/** A {@link Logger} that keeps every line, for tests that assert what was logged. */
export class CapturingLogger implements Logger {
  readonly lines: LogLine[] = [];

  debug(message: string, fields: LogFields = {}): void {
    this.lines.push({ level: "debug", message, fields });
  }

  info(message: string, fields: LogFields = {}): void {
    this.lines.push({ level: "info", message, fields });
  }

  warn(message: string, fields: LogFields = {}): void {
    this.lines.push({ level: "warn", message, fields });
  }

  error(message: string, fields: LogFields = {}): void {
    this.lines.push({ level: "error", message, fields });
  }

  /** The lines whose message matches `pattern`, of `level` when given. */
  matching(pattern: RegExp, level?: LogLine["level"]): LogLine[] {
    return this.lines.filter((l) => pattern.test(l.message) && (level === undefined || l.level === level));
  }
}
