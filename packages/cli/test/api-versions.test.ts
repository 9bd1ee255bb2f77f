// Several versions of a kind: schemas/<kind>.<version>.schema.json put
// together into one CRD, the stored version marked, and the conversion that
// generate asks for (matched against the webhooks' declarations).
import { strict as assert } from "node:assert";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ConversionWebhookDefinition } from "@tessera/runtime/codegen";
import {
  CliError,
  compareVersions,
  customResourceDefinition,
  groupKindVersions,
  readKindSchema,
  versionNames,
  type KindSchema,
} from "../src/index.js";
import { conversionsOf } from "../src/crd-conversion.js";

const dir = mkdtempSync(join(tmpdir(), "tessera-versions-"));

function schema(
  file: string,
  header: Record<string, unknown>,
  spec: Record<string, unknown> = {},
): KindSchema {
  const path = join(dir, file);
  writeFileSync(
    path,
    JSON.stringify({
      "x-tessera": { group: "example.com", kind: "Widget", ...header },
      type: "object",
      properties: {
        spec: { type: "object", properties: spec },
        status: { type: "object", properties: { ready: { type: "boolean", "x-tessera-print": "Ready" } } },
      },
    }),
  );
  return readKindSchema(path);
}

const conversion = (hub: string, spokes: string[]): ConversionWebhookDefinition => ({
  type: "conversion",
  group: "example.com",
  plural: "widgets",
  kind: "Widget",
  hubVersion: hub,
  spokeVersions: spokes,
  path: "/convert",
});

describe("API versions", () => {
  it("orders versions as the API server does: GA, beta, alpha, higher first", () => {
    assert.deepEqual(["v1alpha1", "v2", "v1beta1", "v1", "v1beta2", "v2alpha1"].sort(compareVersions), [
      "v2",
      "v1",
      "v1beta2",
      "v1beta1",
      "v2alpha1",
      "v1alpha1",
    ]);
  });

  it("puts a kind's versions into one CRD: each served, the marked one stored, printer columns per version", () => {
    const kinds = groupKindVersions([
      schema("widget.v1alpha1.schema.json", { version: "v1alpha1" }, { size: { type: "integer" } }),
      schema(
        "widget.v1.schema.json",
        { version: "v1", storage: true },
        { replicas: { type: "integer", "x-tessera-print": "Replicas" } },
      ),
    ]);
    assert.equal(kinds.length, 1);
    const kind = kinds[0]!;
    assert.equal(kind.storage.header.version, "v1");
    const crd = customResourceDefinition(kind, {
      namespace: "widget-system",
      name: "widget-operator-webhook-service",
      path: "/convert",
    }) as {
      spec: {
        versions: {
          name: string;
          served: boolean;
          storage: boolean;
          additionalPrinterColumns: { name: string }[];
        }[];
        conversion: unknown;
      };
    };
    assert.deepEqual(
      crd.spec.versions.map((v) => [
        v.name,
        v.served,
        v.storage,
        v.additionalPrinterColumns.map((c) => c.name),
      ]),
      [
        ["v1", true, true, ["Replicas", "Ready", "Age"]],
        ["v1alpha1", true, false, ["Ready", "Age"]],
      ],
    );
    assert.deepEqual(crd.spec.conversion, {
      strategy: "Webhook",
      webhook: {
        conversionReviewVersions: ["v1"],
        clientConfig: {
          service: {
            namespace: "widget-system",
            name: "widget-operator-webhook-service",
            path: "/convert",
            port: 443,
          },
        },
      },
    });
    // The stored version keeps the kind's names; another carries its version.
    assert.deepEqual(versionNames(kind, kind.versions[0]!), {
      type: "Widget",
      handle: "Widgets",
      validator: "widgetValidator",
      module: "widget",
    });
    assert.deepEqual(versionNames(kind, kind.versions[1]!), {
      type: "WidgetV1alpha1",
      handle: "WidgetsV1alpha1",
      validator: "widgetV1alpha1Validator",
      module: "widget.v1alpha1",
    });
  });

  it("keeps a single schemas/<kind>.schema.json as the stored version, without a marker", () => {
    const [kind] = groupKindVersions([schema("widget.schema.json", { version: "v1alpha1" })]);
    assert.equal(kind!.storage.header.version, "v1alpha1");
    const crd = customResourceDefinition(kind!) as { spec: Record<string, unknown> };
    assert.ok(!("conversion" in crd.spec));
  });

  it("says how to mark the stored version when none or two are", () => {
    const none = () =>
      groupKindVersions([
        schema("widget.v1alpha1.schema.json", { version: "v1alpha1" }),
        schema("widget.v1.schema.json", { version: "v1" }),
      ]);
    assert.throws(
      none,
      (e: Error) =>
        e instanceof CliError &&
        /widgets\.example\.com has 2 versions and none marked as stored/.test(e.message) &&
        e.message.includes('"storage": true'),
    );
    assert.throws(
      () =>
        groupKindVersions([
          schema("widget.v1alpha1.schema.json", { version: "v1alpha1", storage: true }),
          schema("widget.v1.schema.json", { version: "v1", storage: true }),
        ]),
      /2 versions and 2 marked as stored/,
    );
  });

  it("refuses versions that disagree on the scope, a file named for another version, an unversioned file among several", () => {
    assert.throws(
      () =>
        groupKindVersions([
          schema("widget.v1alpha1.schema.json", { version: "v1alpha1", scope: "Cluster" }),
          schema("widget.v1.schema.json", { version: "v1", storage: true }),
        ]),
      /disagree on x-tessera\.scope \("Namespaced" and "Cluster"\)/,
    );
    assert.throws(
      () => schema("widget.v1.schema.json", { version: "v2" }),
      /named for version v1 but its x-tessera\.version is v2/,
    );
    assert.throws(
      () =>
        groupKindVersions([
          schema("widget.schema.json", { version: "v1alpha1" }),
          schema("widget.v1.schema.json", { version: "v1", storage: true }),
        ]),
      /rename it to widget\.v1alpha1\.schema\.json/,
    );
  });

  it("asks for a conversion when a kind has several versions, showing the code to write", () => {
    const kinds = groupKindVersions([
      schema("widget.v1alpha1.schema.json", { version: "v1alpha1", storage: true }),
      schema("widget.v1.schema.json", { version: "v1" }),
    ]);
    assert.throws(
      () => conversionsOf(kinds, []),
      (e: Error) =>
        e instanceof CliError &&
        e.message.includes("widgets.example.com has versions v1, v1alpha1 and no conversion between them") &&
        e.message.includes("tessera create webhook Widget --conversion") &&
        e.message.includes("defineConversion(Widgets, {") &&
        e.message.includes("toHub: (from: WidgetV1): Widget =>") &&
        e.message.includes("export const webhooks = [..., widgetConversion] as const;"),
    );
    assert.equal(conversionsOf(kinds, [conversion("v1alpha1", ["v1"])]).get(kinds[0]!)?.path, "/convert");
    assert.throws(
      () => conversionsOf(kinds, [conversion("v1", ["v1alpha1"])]),
      /converts through v1, but v1alpha1 is the stored version/,
    );
    assert.throws(
      () => conversionsOf(kinds, [conversion("v1alpha1", ["v1beta1"])]),
      /no toHub\/fromHub for v1 .*toHub\/fromHub for v1beta1, which no schema defines/,
    );
  });
});
