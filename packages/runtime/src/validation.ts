/**
 * @tessera/runtime/validation: validation of custom resources against their
 * CRD's OpenAPI schema, as the API server would, and a reconciler wrapper
 * that reports an invalid object instead of reconciling it.
 */
export {
  CrdSchemaValidator,
  CrdSchemaValidators,
  toJsonSchema,
  crdAjvOptions,
} from "./validation/crd-schema-validator.js";
export type {
  StructuralSchema,
  SchemaViolation,
  SchemaValidation,
  CustomResourceDefinitionLike,
} from "./validation/crd-schema-validator.js";
export { validatingReconciler } from "./validation/schema-validating-reconciler.js";
export type { SchemaValidationOptions } from "./validation/schema-validating-reconciler.js";
export { CustomResourceDefinitions, readCrdFile } from "./validation/custom-resource-definitions.js";
export type { CustomResourceDefinition } from "./validation/custom-resource-definitions.js";
