// Writes the settings table of docs/how-to/deploying.md from the manager
// configuration's schema (packages/runtime/src/config/config-schema.ts):
// every TESSERA_* variable, its setting, default and description, between
// the page's marker comments. --check writes nothing and exits 1 when the
// page holds another table (the runtime's config-schema test checks the same).
// Usage: node scripts/config-docs.mjs [--check]   (after npm run build)
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { configSettingsTable, replaceConfigTable } = await import(
  pathToFileURL(join(root, "packages/runtime/dist/src/config/config-docs-table.js")).href
);
const page = join(root, "docs/how-to/deploying.md");
const text = readFileSync(page, "utf8");
const wanted = replaceConfigTable(text, configSettingsTable());
if (process.argv.includes("--check")) {
  if (wanted !== text) {
    console.error(
      "docs/how-to/deploying.md: the settings table differs from the configuration schema; run node scripts/config-docs.mjs",
    );
    process.exit(1);
  }
  console.log("docs/how-to/deploying.md: the settings table matches the configuration schema");
} else if (wanted !== text) {
  writeFileSync(page, wanted);
  console.log("docs/how-to/deploying.md: settings table written");
} else {
  console.log("docs/how-to/deploying.md: settings table already current");
}
