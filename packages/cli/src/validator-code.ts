import { Ajv } from "ajv";
import standaloneCode from "ajv/dist/standalone/index.js";
import { crdAjvOptions, toJsonSchema } from "@tessera/runtime/validation";
import type { VersionNames } from "./kind-versions.js";
import type { KindSchema } from "./schema-file.js";

/**
 * A TypeScript module exporting `names.validator` (`widgetValidator`, or
 * `widgetV1alpha1Validator` for a version that is not stored): the schema compiled
 * by ajv ahead of time (its standalone code, with the options and conversion
 * the runtime's `CrdSchemaValidator` uses), so validation reports the same
 * field paths without compiling a schema at start-up.
 */
export function validatorModule(schema: KindSchema, names: VersionNames): string {
  const ajv = new Ajv({ ...crdAjvOptions, code: { source: true, esm: true, lines: true } });
  const validate = ajv.compile(toJsonSchema(schema.openAPIV3Schema));
  // ajv's ESM output still loads its runtime helpers with require().
  const code = standaloneCode.default(ajv, validate).replace(/^"use strict";/, "");
  const name = names.validator;
  return [
    "// @ts-nocheck: ajv's generated code, checked by ajv, not by tsc.",
    'import { createRequire } from "node:module";',
    'import { CrdSchemaValidator } from "@tessera/runtime/validation";',
    "const require = createRequire(import.meta.url);",
    code
      .replace(/^export const validate = \w+;export default \w+;/m, "")
      .replace(/export (const|default) [^;]*;/g, ""),
    "",
    `/** Validates a ${schema.names.kind}${name === `${schema.names.singular}Validator` ? "" : ` (${schema.header.version})`} as the API server would (paths like \`spec.replicas\`). */`,
    `export const ${name} = CrdSchemaValidator.fromCompiled(${exportedFunction(code)});`,
    "",
  ].join("\n");
}

function exportedFunction(code: string): string {
  const match = /export const validate = (\w+);/.exec(code);
  if (!match) throw new Error("ajv standalone output changed shape: no `export const validate`");
  return match[1]!;
}
