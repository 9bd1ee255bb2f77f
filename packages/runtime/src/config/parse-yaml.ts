import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

/**
 * Parses YAML (and JSON, a subset of YAML 1.2) with the `yaml` package,
 * loaded on the first call: an operator on the in-cluster path with no
 * config file never pays its 13 MiB of RSS. Synchronous, so configuration
 * loading stays synchronous.
 */
export function parseYaml(text: string): unknown {
  const yaml = require("yaml") as typeof import("yaml");
  return yaml.parse(text);
}
