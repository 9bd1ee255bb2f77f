import type { ManagerConfig } from "./manager-config.js";

/** Where `loadConfig` keeps, on the configuration it returns, who set each setting. */
const SOURCES = Symbol("tessera.config.sources");

/**
 * Records on `config` (as a non-enumerable property, so the object stays
 * plain data that compares and serializes as before) the source of each
 * setting given by code, a file or the environment, by JSON pointer.
 */
export function recordSources(config: ManagerConfig, sources: ReadonlyMap<string, string>): void {
  Object.defineProperty(config, SOURCES, { value: new Map(sources), enumerable: false });
}

/**
 * Who set the setting at `pointer` (e.g. `/name`): `code`, the config file's
 * path or a `TESSERA_*` name; undefined when it holds its default, or when
 * `config` was not made by `loadConfig`.
 */
export function settingSource(config: ManagerConfig, pointer: string): string | undefined {
  const sources = (config as { [SOURCES]?: ReadonlyMap<string, string> })[SOURCES];
  // A layer that brings a whole object (`leaderElection: {...}`) is recorded at the object.
  for (let at = pointer; at !== "" && sources; at = at.slice(0, at.lastIndexOf("/"))) {
    const source = sources.get(at);
    if (source !== undefined) return source;
  }
  return undefined;
}
