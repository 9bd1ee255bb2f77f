import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { ControllerBuilder } from "@tessera/runtime";
import { cleanupDeclarationProblems } from "@tessera/runtime/codegen";
import type { CacheOptions, ControllerDefinition, Kind } from "@tessera/runtime/codegen";
import { CliError } from "./cli-error.js";
import { CONTROLLER_LIST, CONTROLLER_LIST_MODULE, checkEveryReconcilerListed } from "./reconciler-classes.js";
import { pluralize } from "./names.js";
import type { ControllerDeclaration, ResourceRef } from "./rbac.js";

type PluginClass = {
  name: string;
  prototype: {
    controller?: (on: ControllerBuilder) => ControllerBuilder | void;
    reconcile?: unknown;
    cleanup?: unknown;
  };
};

/**
 * What the compiled project's reconcilers declare. The list is the
 * `reconcilers` export of `src/controllers/index.ts` (compiled to dist/); a
 * class in src/ with `controller()` and `reconcile()` methods that the list
 * leaves out is an error. Each listed class has its `controller(on)` called
 * with a recording builder of the project's own @tessera/runtime, on an
 * instance that is not constructed: the declaration is all generate needs,
 * and constructing would need the operator's injected services. So
 * `controller()` must not read fields (`this.x` set by the constructor or a
 * field initializer); one that does is named in the error.
 */
export async function readControllerDeclarations(
  dir: string,
  defaultMode: ControllerDeclaration["mode"],
): Promise<ControllerDeclaration[]> {
  const index = join(dir, "dist", CONTROLLER_LIST_MODULE.replace(/\.ts$/, ".js"));
  if (!existsSync(index)) {
    throw new CliError(
      `${CONTROLLER_LIST_MODULE} is missing (no ${index} after compiling): it lists the operator's reconcilers, ` +
        `e.g.\n  import { WidgetReconciler } from "./widget.js";\n  export const ${CONTROLLER_LIST} = [WidgetReconciler];`,
      1,
    );
  }
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
  const listed = ((await import(pathToFileURL(index).href)) as Record<string, unknown>)[CONTROLLER_LIST];
  if (!Array.isArray(listed)) {
    throw new CliError(
      `${CONTROLLER_LIST_MODULE} exports no \`${CONTROLLER_LIST}\` array: list the operator's reconciler classes there, ` +
        `e.g. \`export const ${CONTROLLER_LIST} = [WidgetReconciler];\` (main.ts registers them, generate derives RBAC from them)`,
      1,
    );
  }
  const plugins = listed.map((entry, i) => checkListed(entry, i));
  const files = checkEveryReconcilerListed(
    dir,
    plugins.map((p) => p.name),
  );
  return plugins.map((plugin) => {
    const file = files.get(plugin.name);
    const where = file ? `${file}: ` : "";
    // Records what controller() reads from `this` that the class's prototype does not have: fields.
    const fields: string[] = [];
    const bare = Object.create(plugin.prototype) as object;
    const self = new Proxy(bare, {
      get(target, property, receiver) {
        if (typeof property === "string" && !(property in target) && !fields.includes(property)) {
          fields.push(property);
        }
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
    const builder = new runtime.ControllerBuilder();
    let definition: ControllerDefinition | undefined;
    let failure: Error | undefined;
    try {
      const returned = plugin.prototype.controller!.call(self, builder) ?? builder;
      definition = returned.build();
    } catch (err) {
      failure = err as Error;
    }
    if (fields.length > 0) {
      const named = fields.map((f) => `this.${f}`).join(", ");
      throw new CliError(
        `${where}${plugin.name}.controller(on) reads ${named}, a field: tessera generate calls controller() ` +
          `on an instance of ${plugin.name} it does not construct (no constructor runs, so fields and injected ` +
          `services are undefined there; it reads only the declaration, to derive RBAC). Keep what controller() ` +
          `uses in methods of the class or in module-level functions and constants, not in fields.` +
          (failure ? `\n(controller() then failed: ${failure.message})` : ""),
      );
    }
    if (failure || !definition) {
      throw new CliError(
        `${where}${plugin.name}.controller(): ${failure?.message ?? "returned no builder"}\n` +
          `(tessera generate calls controller() on an instance it does not construct: controller() may use ` +
          `methods and module-level values, not fields or injected services.)`,
      );
    }
    // Absent from a runtime older than finalizer().
    const finalizer = definition.finalizer;
    // A runtime older than finalizer() declares none and has no cleanup to check.
    const mismatch =
      "finalizer" in builder
        ? cleanupDeclarationProblems(finalizer, typeof plugin.prototype.cleanup === "function")
        : [];
    if (mismatch.length > 0) throw new CliError(`${where}${plugin.name}: ${mismatch.join("; ")}`);
    return {
      name: definition.name,
      mode:
        definition.options.mode === "every-replica"
          ? "every-replica"
          : (definition.options.mode ?? defaultMode),
      // `cache` is absent from a runtime older than cache options.
      for: ref(definition.for, definition.cache),
      owns: definition.watches.filter((w) => w.map.type === "owner").map((w) => ref(w.kind, w.cache)),
      watches: definition.watches.filter((w) => w.map.type === "mapped").map((w) => ref(w.kind, w.cache)),
      // Absent from a runtime older than needs().
      permissions: definition.permissions ?? [],
      ...(finalizer !== undefined ? { finalizer } : {}),
    };
  });
}

function checkListed(entry: unknown, i: number): PluginClass {
  const at = `${CONTROLLER_LIST_MODULE}: ${CONTROLLER_LIST}[${i}]`;
  if (typeof entry !== "function") {
    throw new CliError(
      `${at} is ${entry === undefined ? "undefined (an import that does not resolve, or a cycle through index.ts?)" : `not a class (${typeof entry})`}: list reconciler classes, e.g. [WidgetReconciler]`,
    );
  }
  const plugin = entry as PluginClass;
  for (const method of ["controller", "reconcile"] as const) {
    if (typeof plugin.prototype?.[method] !== "function") {
      throw new CliError(
        `${at} (${plugin.name}) has no ${method}() method: a reconciler declares its kinds in controller(on) and handles a request in reconcile()`,
      );
    }
  }
  return plugin;
}

function ref(kind: Kind, cache: CacheOptions | undefined): ResourceRef {
  const plural =
    "plural" in kind && typeof kind.plural === "string" ? kind.plural : pluralize(kind.kind.toLowerCase());
  const declared = cache?.namespaces;
  const namespaces = declared === undefined ? [] : typeof declared === "string" ? [declared] : [...declared];
  // A cluster-scoped kind has no namespaces to be granted in.
  const clusterScoped = "scope" in kind && kind.scope === "Cluster";
  return namespaces.length && !clusterScoped
    ? { group: kind.group, plural, namespaces }
    : { group: kind.group, plural };
}
