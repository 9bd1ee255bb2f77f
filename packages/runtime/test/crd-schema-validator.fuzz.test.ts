import { strict as assert } from "node:assert";
import fc from "fast-check";
import type { KubeObject } from "@tessera/client";
import { CrdSchemaValidator, type StructuralSchema } from "../src/validation.js";
import { fuzz } from "@tessera/core/testing/fuzz";

// A custom resource is whatever a user applied (the API server checks it, but
// an object read before a CRD change, or one the validator sees first, need
// not match): validate must report every violation, never throw, and leave the
// object it was given unchanged.

const schema: StructuralSchema = {
  type: "object",
  required: ["spec"],
  properties: {
    spec: {
      type: "object",
      required: ["image"],
      properties: {
        image: { type: "string", minLength: 1, pattern: "^[a-z0-9./:-]+$" },
        replicas: { type: "integer", minimum: 0, maximum: 100, default: 1 },
        port: { "x-kubernetes-int-or-string": true },
        mode: { type: "string", enum: ["a", "b"], nullable: true },
        env: {
          type: "array",
          items: {
            type: "object",
            required: ["name"],
            properties: { name: { type: "string" }, value: { type: "string" } },
          },
        },
        extra: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
      },
    },
    status: { type: "object", properties: { ready: { type: "boolean" } } },
  },
};
const validator = new CrdSchemaValidator(schema);

const validSpec = fc.record(
  {
    image: fc.constantFrom("web:1", "registry.example.com/a/b:2"),
    replicas: fc.integer({ min: 0, max: 100 }),
    port: fc.oneof(fc.integer(), fc.string()),
    // Not null: whether the API server lets null past an enum on a nullable field is left open (see the report).
    mode: fc.constantFrom("a", "b"),
    env: fc.array(fc.record({ name: fc.string(), value: fc.string() }), { maxLength: 2 }),
    extra: fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
  },
  { requiredKeys: ["image"] },
);
const object = (spec: unknown): KubeObject =>
  ({ apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w" }, spec }) as KubeObject;

/** A valid spec with one field set to an arbitrary JSON value (wrong types, nulls, huge values, nesting). */
const edited = fc
  .record({
    spec: validSpec,
    field: fc.constantFrom("image", "replicas", "port", "mode", "env", "extra", "unknown", "__proto__"),
    value: fc.oneof(fc.jsonValue(), fc.constantFrom(1e308, -1, 1.5, "", "x".repeat(100_000), null, [], {})),
  })
  .map(({ spec, field, value }) => {
    const s: Record<string, unknown> = { ...spec };
    Object.defineProperty(s, field, { value, enumerable: true, writable: true, configurable: true });
    return { obj: object(s), field, value };
  });

function check(obj: unknown): ReturnType<CrdSchemaValidator["validate"]> {
  const before = JSON.stringify(obj);
  const result = validator.validate(obj as KubeObject);
  assert.equal(JSON.stringify(obj), before, "the object given was changed");
  assert.equal(result.valid, result.violations.length === 0);
  for (const v of result.violations) {
    assert.equal(typeof v.path, "string");
    assert.ok(typeof v.message === "string" && v.message !== "");
  }
  // Defaulting is done once: the defaulted copy is as valid and defaults to itself.
  const again = validator.validate(result.defaulted);
  assert.equal(again.valid, result.valid);
  assert.deepEqual(again.defaulted, result.defaulted);
  return result;
}

describe("custom resources against their schema (fuzz)", () => {
  it("arbitrary JSON as an object: violations, never an exception", () => {
    fuzz(
      "crd schema: arbitrary objects",
      fc.oneof(
        fc.jsonValue(),
        fc.dictionary(fc.constantFrom("spec", "status", "metadata", "x"), fc.jsonValue()),
      ),
      (obj) => void check(obj),
      1500,
    );
  });

  it("a valid object with one field changed: valid, or a violation naming that field", () => {
    fuzz(
      "crd schema: valid objects with one field changed",
      edited,
      ({ obj, field }) => {
        const result = check(obj);
        if (!result.valid) {
          assert.ok(
            result.violations.some(
              (v) =>
                v.path === `spec.${field}` ||
                v.path.startsWith(`spec.${field}[`) ||
                v.path.startsWith(`spec.${field}.`),
            ),
            `no violation names spec.${field}: ${JSON.stringify(result.violations)}`,
          );
        }
      },
      1500,
    );
  });
});
