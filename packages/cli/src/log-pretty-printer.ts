import { styleText } from "node:util";

const LEVEL_STYLE: Record<string, Parameters<typeof styleText>[0]> = {
  debug: "gray",
  info: "green",
  warn: "yellow",
  error: "red",
};

/**
 * One structured (JSON) log line as a person reads it: `12:04:31 INFO  message
 * key=value ...`, the level coloured when `color`. A line that is not JSON is
 * returned as it is.
 */
export function prettyLogLine(line: string, color: boolean): string {
  let entry: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(line);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return line;
    entry = parsed as Record<string, unknown>;
  } catch {
    return line;
  }
  const { ts, level, msg, ...fields } = entry;
  const time = typeof ts === "string" ? ts.slice(11, 19) : "";
  const lvl = typeof level === "string" ? level : "info";
  const label = lvl.toUpperCase().padEnd(5);
  const rest = Object.entries(fields)
    .filter(([k]) => k !== "stack")
    .map(
      ([k, v]) =>
        `${k}=${typeof v === "string" ? (/\s/.test(v) ? JSON.stringify(v) : v) : JSON.stringify(v)}`,
    )
    .join(" ");
  const paint = (style: Parameters<typeof styleText>[0], text: string) =>
    color ? styleText(style, text, { validateStream: false }) : text;
  return `${paint("gray", time)} ${paint(LEVEL_STYLE[lvl] ?? "white", label)} ${typeof msg === "string" ? msg : JSON.stringify(msg ?? "")}${rest ? ` ${paint("gray", rest)}` : ""}`;
}
