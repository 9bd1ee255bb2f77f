// Redraws the SVG of every benchmark result in bench/results/ from its JSON,
// and with --publish copies both into docs/plots/, which docs/benchmarks.md
// shows. `npm run bench` runs it (with --publish) after the benchmarks.
// Usage: node bench/plot.js [--publish] [name ...]
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { renderSvg } from "./lib/plot.js";
import { resultsDir } from "./lib/results.js";

const docsPlots = join(dirname(fileURLToPath(import.meta.url)), "..", "docs", "plots");
const args = process.argv.slice(2);
const publish = args.includes("--publish");
const names = args.filter((a) => !a.startsWith("--"));
if (!existsSync(resultsDir)) {
  console.error(`no results yet in ${resultsDir}: run a benchmark first (npm run bench)`);
  process.exit(2);
}
const files = readdirSync(resultsDir)
  .filter((f) => f.endsWith(".json"))
  .filter((f) => names.length === 0 || names.includes(f.slice(0, -".json".length)));
if (publish) mkdirSync(docsPlots, { recursive: true });
for (const file of files) {
  const json = join(resultsDir, file);
  const svg = json.replace(/\.json$/, ".svg");
  writeFileSync(svg, renderSvg(JSON.parse(readFileSync(json, "utf8"))));
  if (publish) {
    copyFileSync(json, join(docsPlots, file));
    copyFileSync(svg, join(docsPlots, file.replace(/\.json$/, ".svg")));
  }
  console.log(`${publish ? "published" : "drew"} ${file.replace(/\.json$/, ".svg")}`);
}
