import { ConfigError } from "./config-error.js";
import { managerConfigSchema } from "./config-schema.js";
import type { ControllerMode, ManagerConfig } from "./manager-config.js";
import { settingSource } from "./setting-source.js";

/**
 * Refuses to start an operator that elects a leader or runs a ring without
 * a name of its own: the default name would make it share its Lease, its
 * rings and its field manager with every other unnamed operator in the
 * namespace. Called with each controller's effective mode before anything
 * starts; an `every-replica` operator may stay unnamed. A name counts as set
 * when code, the config file or `TESSERA_NAME` gave it (or, for a
 * configuration not made by `loadConfig`, when it is not the default).
 */
export function requireOperatorName(
  config: ManagerConfig,
  controllers: ReadonlyArray<{ readonly name: string; readonly mode: ControllerMode }>,
): void {
  const coordinated = controllers.filter((c) => c.mode === "leader" || c.mode === "sharded");
  if (coordinated.length === 0) return;
  if (settingSource(config, "/name") !== undefined || config.name !== UNNAMED) return;
  const which = coordinated.map((c) => `"${c.name}" (${c.mode})`).join(", ");
  throw new ConfigError([
    {
      path: "/name",
      expected:
        `a name for this operator, because controller${coordinated.length === 1 ? "" : "s"} ${which} ` +
        `coordinate${coordinated.length === 1 ? "s" : ""} replicas through Leases named after it: ` +
        `set it in code (Manager.create({ config: { name: "my-operator" } })), as name: in the config file, ` +
        `or with TESSERA_NAME (unnamed operators would share the Lease, rings and field manager "${UNNAMED}")`,
      found: "nothing",
      source: "the default",
    },
  ]);
}

/** The schema's default name, which only an `every-replica` operator may keep. */
const UNNAMED = managerConfigSchema.properties.name.default;
