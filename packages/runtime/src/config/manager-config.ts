import type { managerConfigSchema } from "./config-schema.js";
import type { FromConfigSchema } from "./from-config-schema.js";

/**
 * The manager's configuration once loaded and validated: every field has
 * its value (defaults filled), except those the schema marks `x-optional`.
 * Derived from {@link managerConfigSchema}, where each setting's
 * description and default live. Written by operators as code, a YAML or
 * JSON file, and `TESSERA_*` environment variables (see `loadConfig`).
 */
export type ManagerConfig = FromConfigSchema<typeof managerConfigSchema>;

/** How a controller runs across an operator's replicas. */
export type ControllerMode = ManagerConfig["mode"];

/** What configuration may override for one controller (`controllers.<name>`). */
export type ControllerConfig = ManagerConfig["controllers"][string];

/** What code passes: any subset, deep (`webhook: { certificates: { extraHosts } }`). */
export type ManagerConfigInput = DeepPartial<ManagerConfig>;

/** `T` with every field of every nested object optional; lists stay whole. */
export type DeepPartial<T> = {
  [K in keyof T]?: T[K] extends readonly unknown[]
    ? T[K]
    : T[K] extends Record<string, unknown>
      ? DeepPartial<T[K]>
      : T[K];
};
