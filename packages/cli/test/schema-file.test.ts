import { strict as assert } from "node:assert";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CliError,
  customResourceDefinition,
  groupKindVersions,
  readKindSchema,
  structuralProblems,
} from "../src/index.js";

function schemaFile(content: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), "tessera-schema-")), "thing.schema.json");
  writeFileSync(file, JSON.stringify(content));
  return file;
}

const header = { group: "example.com", version: "v1", kind: "Thing" };

describe("schema files", () => {
  it("turns a schema into a CRD: status subresource, printer columns, no x-tessera keys", () => {
    const schema = readKindSchema(
      schemaFile({
        "x-tessera": { ...header, shortNames: ["th"] },
        type: "object",
        properties: {
          spec: {
            type: "object",
            properties: {
              size: { type: "integer", "x-tessera-print": "Size" },
              "x-tessera-name": { type: "string" },
            },
          },
          status: {
            type: "object",
            properties: {
              at: { type: "string", format: "date-time", "x-tessera-print": { name: "Seen", priority: 1 } },
            },
          },
        },
      }),
    );
    const crd = customResourceDefinition(groupKindVersions([schema])[0]!) as {
      metadata: { name: string };
      spec: { names: { shortNames: string[] }; versions: Array<Record<string, unknown>> };
    };
    assert.equal(crd.metadata.name, "things.example.com");
    assert.deepEqual(crd.spec.names.shortNames, ["th"]);
    const version = crd.spec.versions[0]!;
    assert.deepEqual(version["subresources"], { status: {} });
    assert.deepEqual(version["additionalPrinterColumns"], [
      { name: "Size", type: "integer", jsonPath: ".spec.size" },
      { name: "Seen", type: "date", jsonPath: ".status.at", priority: 1 },
      { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
    ]);
    const text = JSON.stringify(version["schema"]);
    assert.ok(!text.includes("x-tessera-print") && !text.includes('"x-tessera"'), text);
    // A property named like an annotation is data, and stays.
    assert.ok(text.includes('"x-tessera-name"'));
  });

  it("refuses a schema that is not structural, naming the path of each offending node", () => {
    const file = schemaFile({
      "x-tessera": header,
      type: "object",
      properties: {
        spec: {
          type: "object",
          properties: {
            untyped: { description: "no type" },
            tuple: { type: "array", items: [{ type: "string" }] },
            both: {
              type: "object",
              properties: { a: { type: "string" } },
              additionalProperties: { type: "string" },
            },
            ref: { type: "object", $ref: "#/definitions/x" },
          },
        },
      },
    });
    assert.throws(
      () => readKindSchema(file),
      (e: Error) =>
        e instanceof CliError &&
        e.message.includes(".properties.spec.properties.untyped: no type") &&
        e.message.includes('.properties.spec.properties.tuple: "items" must be one schema') &&
        e.message.includes('.properties.spec.properties.both: "properties" and "additionalProperties"') &&
        e.message.includes('.properties.spec.properties.ref: "$ref" is not supported'),
    );
  });

  it("accepts the escape hatches of structural schemas", () => {
    assert.deepEqual(
      structuralProblems(
        {
          type: "object",
          properties: {
            port: { "x-kubernetes-int-or-string": true },
            raw: { "x-kubernetes-preserve-unknown-fields": true },
          },
        },
        "",
      ),
      [],
    );
  });

  it("says what is missing from the header", () => {
    assert.throws(() => readKindSchema(schemaFile({ type: "object" })), /no "x-tessera" object/);
    assert.throws(
      () => readKindSchema(schemaFile({ "x-tessera": { ...header, group: "nodot" }, type: "object" })),
      /thing\.schema\.json: invalid group "nodot"/,
    );
  });
});
