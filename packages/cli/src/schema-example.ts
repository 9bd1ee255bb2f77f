import { isObject, type SchemaNode } from "./schema-file.js";

/**
 * A value of `schema` with every field set: each property, one item per
 * array, one key per map, the first value of an enum, the minimum of a
 * number. What a scaffolded round-trip test starts from, so that a field a
 * conversion drops is caught from the first run.
 */
export function exampleOf(schema: SchemaNode, name = "example"): unknown {
  if (Array.isArray(schema["enum"]) && schema["enum"].length > 0) return schema["enum"][0];
  if (schema["x-kubernetes-int-or-string"] === true) return 1;
  switch (schema["type"]) {
    case "string":
      if (schema["format"] === "date-time") return "2026-01-02T03:04:05Z";
      if (schema["format"] === "date") return "2026-01-02";
      return typeof schema["minLength"] === "number" && schema["minLength"] > name.length
        ? name.padEnd(schema["minLength"], "x")
        : name;
    case "integer":
    case "number":
      return typeof schema["minimum"] === "number" ? Math.max(schema["minimum"], 1) : 1;
    case "boolean":
      return true;
    case "array":
      return isObject(schema["items"]) ? [exampleOf(schema["items"], name)] : [];
    case "object": {
      const out: Record<string, unknown> = {};
      const properties = schema["properties"];
      if (isObject(properties)) {
        for (const [key, sub] of Object.entries(properties))
          if (isObject(sub)) out[key] = exampleOf(sub, key);
      }
      const additional = schema["additionalProperties"];
      if (isObject(additional)) out[`${name}-key`] = exampleOf(additional, `${name}-value`);
      return out;
    }
    default:
      return {};
  }
}
