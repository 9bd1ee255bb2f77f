import type { Clock } from "./clock.js";
import type { LogFields, Logger } from "./logger.js";
import { redactSecret } from "./redact-secret.js";
import { isoTime } from "./iso-time.js";

/** The levels a {@link JsonLogger} knows, lowest first. */
export type LogLevel = "debug" | "info" | "warn" | "error";

const RANK: Readonly<Record<LogLevel, number>> = { debug: 0, info: 1, warn: 2, error: 3 };

/** Options of a {@link JsonLogger}. */
export interface JsonLoggerOptions {
  /** Lowest level written; default "info". */
  level?: LogLevel;
  /** Where each line goes (newline included); default `process.stderr`. */
  write?: (line: string) => void;
  /** Stamps each line's `ts` (wall time); default the system time. */
  clock?: Pick<Clock, "wallTime">;
  /** Fields on every line, e.g. `{ logger: "widget-operator" }`. */
  fields?: LogFields;
}

/**
 * A {@link Logger} that writes one JSON object per line (`ts`, `level`, `msg`,
 * then the fields), the shape log pipelines (Loki, Elasticsearch, Cloud
 * Logging) parse without configuration, like controller-runtime's zap in
 * production mode. Errors in fields become `{ name, message, stack, cause }`
 * instead of the `{}` JSON.stringify would give; bigints become strings and a
 * circular reference is written as "[Circular]", so a log call never throws.
 * A Kubernetes Secret anywhere in the fields has its `data` and `stringData`
 * written as `"[redacted <n> keys]"` (see {@link redactSecret}).
 */
export class JsonLogger implements Logger {
  private readonly rank: number;
  private readonly write: (line: string) => void;
  private readonly clock: Pick<Clock, "wallTime">;
  private readonly fields: LogFields;

  constructor(options: JsonLoggerOptions = {}) {
    this.rank = RANK[options.level ?? "info"];
    this.write = options.write ?? ((line) => process.stderr.write(line));
    this.clock = options.clock ?? { wallTime: () => new Date() };
    this.fields = options.fields ?? {};
  }

  /** Whether a line at `level` would be written. */
  enabled(level: LogLevel): boolean {
    return RANK[level] >= this.rank;
  }

  debug(message: string, fields?: LogFields): void {
    this.log("debug", message, fields);
  }

  info(message: string, fields?: LogFields): void {
    this.log("info", message, fields);
  }

  warn(message: string, fields?: LogFields): void {
    this.log("warn", message, fields);
  }

  error(message: string, fields?: LogFields): void {
    this.log("error", message, fields);
  }

  private log(level: LogLevel, message: string, fields: LogFields | undefined): void {
    if (RANK[level] < this.rank) return;
    const entry = { ts: isoTime(this.clock.wallTime()), level, msg: message, ...this.fields, ...fields };
    this.write(JSON.stringify(entry, replacer()) + "\n");
  }
}

/** A JSON.stringify replacer for log fields: errors, bigints, cycles. */
function replacer(): (this: unknown, key: string, value: unknown) => unknown {
  const seen = new WeakSet<object>();
  return (_key, value) => {
    if (typeof value === "bigint") return value.toString();
    if (value instanceof Error) return errorFields(value);
    if (value !== null && typeof value === "object") {
      if (seen.has(value)) return "[Circular]";
      seen.add(value);
      return redactSecret(value);
    }
    return value;
  };
}

function errorFields(error: Error): Record<string, unknown> {
  const out: Record<string, unknown> = { name: error.name, message: error.message };
  for (const [key, value] of Object.entries(error)) if (!(key in out)) out[key] = value;
  if (error.stack) out["stack"] = error.stack;
  if (error.cause !== undefined) out["cause"] = error.cause;
  return out;
}
