import { configEnvironmentVariables } from "./config-environment.js";
import type { SchemaNode } from "./schema-node.js";

/**
 * The settings table of docs/how-to/deploying.md, as Markdown, made from
 * the configuration schema: one row per `TESSERA_*` variable with the
 * setting's path in a config file, its default and its description.
 * `scripts/config-docs.mjs` writes it between the page's marker comments; a
 * test fails when the page holds another.
 */
export function configSettingsTable(): string {
  const rows = [
    "| variable | setting | default | what it does |",
    "|---|---|---|---|",
    "| `TESSERA_CONFIG` | | none | The path of a YAML or JSON config file: the settings below as a mapping (`leaderElection:` then `leaseDurationMs: 20000`). |",
  ];
  for (const [name, { path, node }] of configEnvironmentVariables()) {
    rows.push(`| \`${name}\` | \`${path.join(".")}\` | ${defaultOf(node)} | ${cell(describe(node))} |`);
  }
  return rows.join("\n") + "\n";
}

function defaultOf(node: SchemaNode): string {
  if (node["x-default"] !== undefined) return cell(node["x-default"]);
  if (node.default !== undefined) return `\`${JSON.stringify(node.default)}\``;
  return "none";
}

/**
 * The description; for a choice without a `type`, the values to choose from
 * unless it names them all; for a map, the fields of an entry.
 */
function describe(node: SchemaNode): string {
  const text = node.description ?? "";
  const entry = typeof node.additionalProperties === "object" ? node.additionalProperties : undefined;
  if (entry?.properties) {
    const fields = Object.entries(entry.properties).map(
      ([key, child]) => `\`${key}\`: ${child.description ?? ""}`,
    );
    return `${text} An entry's fields: ${fields.join(" ")}`;
  }
  if (node.type !== undefined || node.enum === undefined) return text;
  const values = node.enum.map((v) => `\`${String(v)}\``);
  return values.every((v) => text.includes(v)) ? text : `${text} One of ${values.join(", ")}.`;
}

/** Text that stays in its Markdown table cell. */
const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

/** The marker comments the table sits between. */
export const CONFIG_TABLE_START =
  "<!-- config-table: generated from managerConfigSchema by scripts/config-docs.mjs; edit the schema, not this table -->";
export const CONFIG_TABLE_END = "<!-- /config-table -->";

/** `page` with the text between its config-table markers replaced by `table`. */
export function replaceConfigTable(page: string, table: string): string {
  const start = page.indexOf(CONFIG_TABLE_START);
  const end = page.indexOf(CONFIG_TABLE_END);
  if (start < 0 || end < start) {
    throw new Error(
      `no config-table markers in the page: put ${CONFIG_TABLE_START} and ${CONFIG_TABLE_END} where the table goes`,
    );
  }
  return `${page.slice(0, start + CONFIG_TABLE_START.length)}\n${table}${page.slice(end)}`;
}
