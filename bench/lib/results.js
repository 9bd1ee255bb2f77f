// The one shape every benchmark's result takes, written as JSON to
// bench/results/<name>.json, and the SVG plot drawn from it. A result is
// groups of bars (a scenario, an object count) with one bar per contender:
// its median, min and max over the rounds, and the rounds themselves.
// bench/plot.js redraws the SVGs from the JSON and publishes both to
// docs/plots/, where docs/benchmarks.md shows them.
import { mkdirSync, writeFileSync } from "node:fs";
import { arch, cpus, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { renderSvg } from "./plot.js";

export const resultsDir = join(dirname(fileURLToPath(import.meta.url)), "..", "results");

/** The median (the lower middle of an even count), min and max of `values`. */
export function summarize(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    median: sorted[Math.floor((sorted.length - 1) / 2)],
    min: sorted[0],
    max: sorted[sorted.length - 1],
    runs: values,
  };
}

/**
 * Writes bench/results/<name>.json and <name>.svg.
 * @param {{
 *   name: string, title: string, unit: string, lowerIsBetter: boolean,
 *   groups: { label: string, bars: { label: string, median: number, min: number, max: number, runs?: number[] }[] }[],
 *   note?: string,
 *   rows?: unknown[],
 * }} result (rows: the raw figures behind the bars, kept in the JSON)
 * @returns {string} the JSON file's path
 */
export function writeResult(result) {
  const full = {
    ...result,
    date: new Date().toISOString(),
    machine: `${cpus().length} cores (${cpus()[0]?.model ?? arch()}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
  };
  mkdirSync(resultsDir, { recursive: true });
  const json = join(resultsDir, `${result.name}.json`);
  writeFileSync(json, JSON.stringify(full, null, 2) + "\n");
  writeFileSync(join(resultsDir, `${result.name}.svg`), renderSvg(full));
  console.log(`result: ${json} (and .svg)`);
  return json;
}
