/**
 * @tessera/runtime/config: the manager's configuration: its schema, the
 * loader that merges code, file and `TESSERA_*` environment variables, and
 * the error that lists every violation.
 */
export type {
  ManagerConfig,
  ManagerConfigInput,
  DeepPartial,
  ControllerConfig,
  ControllerMode,
} from "./config/manager-config.js";
export { loadConfig, configEnvironmentVariables } from "./config/load-config.js";
export type { LoadConfigOptions, SchemaNode } from "./config/load-config.js";
export { managerConfigSchema } from "./config/config-schema.js";
export type { FromConfigSchema } from "./config/from-config-schema.js";
export { ConfigError } from "./config/config-error.js";
export type { ConfigViolation } from "./config/config-error.js";
