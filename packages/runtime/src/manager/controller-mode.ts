import type { ControllerMode, ManagerConfig } from "../config/manager-config.js";
import type { ControllerDefinition } from "../builder/controller-builder.js";
import type { KubeObject } from "@tessera/client";

/** The mode a controller runs in: configuration for it by name, then its declaration, then the manager's default. */
export function controllerMode(
  config: ManagerConfig,
  definition: ControllerDefinition<KubeObject>,
): ControllerMode {
  return config.controllers[definition.name]?.mode ?? definition.options.mode ?? config.mode;
}
