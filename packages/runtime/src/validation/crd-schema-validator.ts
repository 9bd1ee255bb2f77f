import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import type { KubeObject } from "@tessera/client";

/** A `JSONSchemaProps` of a CRD version's `schema.openAPIV3Schema`, as far as validation reads it. */
export type StructuralSchema = Record<string, unknown>;

/** One way an object breaks its CRD's schema. */
export interface SchemaViolation {
  /** The field, as the API server names it: `spec.replicas`, `spec.ports[0].name`. */
  readonly path: string;
  /** What is wrong, e.g. `must be integer`, `is not allowed (the API server prunes unknown fields)`. */
  readonly message: string;
}

/** What {@link CrdSchemaValidator.validate} found. */
export interface SchemaValidation<T> {
  readonly valid: boolean;
  readonly violations: readonly SchemaViolation[];
  /** The object with the schema's defaults applied, as the API server would store it. */
  readonly defaulted: T;
}

/** The ajv options a CRD schema is compiled with, at start-up or ahead of time. */
export const crdAjvOptions = Object.freeze({
  allErrors: true,
  strict: false,
  useDefaults: true,
  validateFormats: false,
} as const);

/**
 * Converts a structural schema (Kubernetes' OpenAPI v3 subset with its
 * extensions) into the JSON Schema ajv checks: `nullable` becomes a null
 * type, `x-kubernetes-int-or-string` an integer-or-string, and an object
 * with `properties` refuses others unless `x-kubernetes-preserve-unknown-fields`
 * (the API server prunes them; the validator reports them). `metadata`,
 * `apiVersion` and `kind` at the root are left to the API server.
 */
export function toJsonSchema(schema: StructuralSchema, root = true): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key.startsWith("x-kubernetes-") || key === "nullable" || key === "example" || key === "externalDocs")
      continue;
    if (key === "properties" && value && typeof value === "object") {
      const props: Record<string, unknown> = {};
      for (const [name, sub] of Object.entries(value as Record<string, StructuralSchema>)) {
        props[name] = toJsonSchema(sub, false);
      }
      out["properties"] = props;
    } else if (
      (key === "items" || key === "additionalProperties" || key === "not") &&
      value &&
      typeof value === "object"
    ) {
      out[key] = toJsonSchema(value as StructuralSchema, false);
    } else if ((key === "allOf" || key === "anyOf" || key === "oneOf") && Array.isArray(value)) {
      out[key] = value.map((v: StructuralSchema) => toJsonSchema(v, false));
    } else {
      out[key] = value;
    }
  }
  if (schema["x-kubernetes-int-or-string"] === true) {
    delete out["type"];
    out["anyOf"] = [
      { type: "integer" },
      { type: "string" },
      ...(schema["nullable"] === true ? [{ type: "null" }] : []),
    ];
  } else if (schema["nullable"] === true && typeof out["type"] === "string") {
    out["type"] = [out["type"], "null"];
  }
  if (
    (out["type"] === "object" || out["properties"] !== undefined) &&
    out["properties"] !== undefined &&
    out["additionalProperties"] === undefined &&
    schema["x-kubernetes-preserve-unknown-fields"] !== true
  ) {
    out["additionalProperties"] = false;
  }
  if (root) {
    const props = { ...((out["properties"] as Record<string, unknown> | undefined) ?? {}) };
    for (const name of ["apiVersion", "kind", "metadata"]) props[name] ??= {};
    out["properties"] = props;
  }
  return out;
}

/**
 * Validates objects of one CRD version against its `openAPIV3Schema` with
 * ajv, as the API server would: wrong types, missing required fields, enums,
 * patterns, formats' neighbours (ranges, lengths), and fields the server would
 * prune. Defaults are applied to a copy. Compile once per CRD generation
 * ({@link CrdSchemaValidators} caches them).
 *
 * ```ts
 * const { valid, violations, defaulted } = new CrdSchemaValidator(schema).validate(gadget);
 * // violations: [{ path: "spec.replicas", message: "Invalid value: must be of type integer" }]
 * ```
 */
export class CrdSchemaValidator {
  private readonly check: ValidateFunction;

  constructor(schema: StructuralSchema) {
    this.check = new Ajv(crdAjvOptions).compile(toJsonSchema(schema));
  }

  /**
   * A validator from a function ajv compiled ahead of time (ajv's standalone
   * code, with {@link crdAjvOptions}, of {@link toJsonSchema}'s output), as
   * `tessera generate` writes: no schema compile at start-up.
   */
  static fromCompiled(check: ValidateFunction): CrdSchemaValidator {
    const validator = Object.create(CrdSchemaValidator.prototype) as { check: ValidateFunction };
    validator.check = check;
    return validator as unknown as CrdSchemaValidator;
  }

  validate<T extends KubeObject>(object: T): SchemaValidation<T> {
    const copy = structuredClone(object);
    const valid = this.check(copy);
    const violations = valid ? [] : dedupe((this.check.errors ?? []).map(describe));
    return { valid: violations.length === 0, violations, defaulted: copy };
  }
}

/** A CRD as the validators read it. */
export interface CustomResourceDefinitionLike {
  metadata?: { name?: string; uid?: string; generation?: number };
  spec: { versions: Array<{ name: string; schema?: { openAPIV3Schema?: StructuralSchema } }> };
}

/** Compiled validators per CRD, version and generation: a CRD update compiles anew, nothing else does. */
export class CrdSchemaValidators {
  private readonly cache = new Map<string, CrdSchemaValidator>();

  for(crd: CustomResourceDefinitionLike, version: string): CrdSchemaValidator {
    const key = `${crd.metadata?.uid ?? crd.metadata?.name}/${version}/${crd.metadata?.generation ?? 0}`;
    let validator = this.cache.get(key);
    if (!validator) {
      const schema = crd.spec.versions.find((v) => v.name === version)?.schema?.openAPIV3Schema;
      if (!schema) {
        throw new TypeError(`CRD ${crd.metadata?.name ?? "(unnamed)"} has no schema for version ${version}`);
      }
      validator = new CrdSchemaValidator(schema);
      for (const old of [...this.cache.keys()]) {
        if (old.startsWith(`${crd.metadata?.uid ?? crd.metadata?.name}/${version}/`)) this.cache.delete(old);
      }
      this.cache.set(key, validator);
    }
    return validator;
  }
}

/** `/spec/ports/0/name` -> `spec.ports[0].name`, the API server's spelling. */
function fieldPath(pointer: string): string {
  return pointer
    .split("/")
    .slice(1)
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part), "");
}

function describe(error: ErrorObject): SchemaViolation {
  const params = error.params as Record<string, unknown>;
  const at = fieldPath(error.instancePath);
  const join = (field: string) => (at ? `${at}.${field}` : field);
  switch (error.keyword) {
    case "required":
      return { path: join(String(params["missingProperty"])), message: "Required value" };
    case "additionalProperties":
      return {
        path: join(String(params["additionalProperty"])),
        message: "field not declared in schema (the API server prunes it)",
      };
    case "enum":
      return {
        path: at,
        message: `Unsupported value: supported values: ${(params["allowedValues"] as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`,
      };
    case "type":
      return { path: at, message: `Invalid value: must be of type ${String(params["type"])}` };
    case "pattern":
      return { path: at, message: `Invalid value: should match '${String(params["pattern"])}'` };
    default:
      return { path: at, message: `Invalid value: ${error.message ?? error.keyword}` };
  }
}

function dedupe(violations: SchemaViolation[]): SchemaViolation[] {
  const seen = new Set<string>();
  return violations.filter((v) => {
    const key = `${v.path}\u0000${v.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
