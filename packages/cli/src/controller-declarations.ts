import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { ControllerBuilder } from "@tessera/runtime";
import type { ControllerDefinition, Kind } from "@tessera/runtime/codegen";
import { CliError } from "./cli-error.js";
import { pluralize } from "./names.js";
import type { ControllerDeclaration, ResourceRef } from "./rbac.js";

type PluginClass = {
  name: string;
  prototype: { controller?: (on: ControllerBuilder) => ControllerBuilder | void };
};

/**
 * What the compiled project's reconcilers declare: each class listed in
 * `dist/src/generated/index.js` has its `controller(on)` called with a
 * recording builder of the project's own @tessera/runtime, without
 * constructing it (so `controller()` must not read injected fields, which the
 * runtime's own plugins never need).
 */
export async function readControllerDeclarations(
  dir: string,
  defaultMode: ControllerDeclaration["mode"],
): Promise<ControllerDeclaration[]> {
  const index = join(dir, "dist/src/generated/index.js");
  if (!existsSync(index)) throw new CliError(`${index} is missing: the project did not compile to dist/`, 1);
  const require = createRequire(join(dir, "package.json"));
  let runtimePath: string;
  try {
    runtimePath = require.resolve("@tessera/runtime/codegen");
  } catch {
    throw new CliError(`@tessera/runtime is not installed in ${dir}: run npm install first`);
  }
  const runtime = (await import(pathToFileURL(runtimePath).href)) as {
    ControllerBuilder: new () => ControllerBuilder;
  };
  const { reconcilers } = (await import(pathToFileURL(index).href)) as { reconcilers?: PluginClass[] };
  if (!Array.isArray(reconcilers)) throw new CliError(`${index} exports no \`reconcilers\` list`, 1);
  return reconcilers.map((plugin) => {
    const controller = plugin.prototype.controller;
    if (typeof controller !== "function") {
      throw new CliError(
        `${plugin.name} has no controller(on) method: a reconciler plugin declares its kinds there`,
      );
    }
    const builder = new runtime.ControllerBuilder();
    let definition: ControllerDefinition;
    try {
      const returned = controller.call(Object.create(plugin.prototype) as object, builder) ?? builder;
      definition = returned.build();
    } catch (err) {
      throw new CliError(`${plugin.name}.controller(): ${(err as Error).message}`);
    }
    return {
      name: definition.name,
      mode:
        definition.options.mode === "every-replica"
          ? "every-replica"
          : (definition.options.mode ?? defaultMode),
      for: ref(definition.for),
      owns: definition.watches.filter((w) => w.map.type === "owner").map((w) => ref(w.kind)),
      watches: definition.watches.filter((w) => w.map.type === "mapped").map((w) => ref(w.kind)),
      // Absent from a runtime older than needs().
      permissions: definition.permissions ?? [],
    };
  });
}

function ref(kind: Kind): ResourceRef {
  const plural =
    "plural" in kind && typeof kind.plural === "string" ? kind.plural : pluralize(kind.kind.toLowerCase());
  return { group: kind.group, plural };
}
