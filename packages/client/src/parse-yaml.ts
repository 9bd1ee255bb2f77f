import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

/**
 * Parses YAML (and JSON, a subset of YAML 1.2) with the `yaml` package,
 * loaded on the first call: an operator on the in-cluster path with no
 * config file never pays its 13 MiB of RSS. Synchronous, so configuration
 * loading stays synchronous. What the parser would only warn about (an
 * unknown tag such as `!secret`) throws too, so a configuration never
 * means something other than it says, and nothing is printed to stderr.
 */
export function parseYaml(text: string): unknown {
  const yaml = require("yaml") as typeof import("yaml");
  const doc = yaml.parseDocument(text, { logLevel: "silent" });
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem) throw problem;
  return doc.toJS();
}
