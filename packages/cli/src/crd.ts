import type { ApiKind } from "./kind-versions.js";
import { isObject, type KindSchema, type SchemaNode } from "./schema-file.js";

/** One `additionalPrinterColumns` entry. */
export interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  description?: string;
  priority?: number;
}

/**
 * The printer columns a schema asks for with `x-tessera-print` on its
 * properties, in document order, then `Age` (kubectl drops its own Age column
 * once a CRD names any).
 */
export function printerColumns(schema: KindSchema): PrinterColumn[] {
  const columns: PrinterColumn[] = [];
  const visit = (node: SchemaNode, jsonPath: string) => {
    const print = node["x-tessera-print"];
    if (print !== undefined && jsonPath) {
      const spec = typeof print === "string" ? { name: print } : isObject(print) ? print : {};
      const column: PrinterColumn = {
        name: typeof spec["name"] === "string" ? spec["name"] : jsonPath.split(".").pop()!,
        type: columnType(node),
        jsonPath: typeof spec["jsonPath"] === "string" ? spec["jsonPath"] : jsonPath,
      };
      if (typeof node["description"] === "string") column.description = node["description"];
      if (typeof spec["priority"] === "number") column.priority = spec["priority"];
      if (typeof spec["type"] === "string") column.type = spec["type"];
      columns.push(column);
    }
    const properties = node["properties"];
    if (isObject(properties)) {
      for (const [name, sub] of Object.entries(properties))
        if (isObject(sub)) visit(sub, `${jsonPath}.${name}`);
    }
  };
  visit(schema.raw, "");
  columns.push({ name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" });
  return columns;
}

function columnType(node: SchemaNode): string {
  if (node["type"] === "string" && node["format"] === "date-time") return "date";
  if (node["type"] === "integer" || node["type"] === "number" || node["type"] === "boolean")
    return node["type"];
  return "string";
}

/** Where the API server sends a kind's ConversionReviews: the operator's webhook Service. */
export interface ConversionService {
  readonly namespace: string;
  /** The Service's name (`webhookResourceNames(operator).service`). */
  readonly name: string;
  /** `CONVERSION_WEBHOOK_PATH`. */
  readonly path: string;
}

/**
 * The CustomResourceDefinition of one kind: each version served (unless its
 * header says `"served": false`), the one stored marked so, each with the
 * status subresource when its schema has a `status` property, its printer
 * columns and its schema. With `conversion`, the API server converts between
 * versions by calling the operator's webhook (`strategy: Webhook`,
 * ConversionReview v1); its CA bundle is written by the operator at run time
 * (or by cert-manager's CA injector).
 */
export function customResourceDefinition(
  kind: ApiKind,
  conversion?: ConversionService,
): Record<string, unknown> {
  const { names, storage } = kind;
  const header = storage.header;
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${names.plural}.${kind.group}` },
    spec: {
      group: kind.group,
      names: {
        kind: names.kind,
        listKind: names.listKind,
        plural: names.plural,
        singular: names.singular,
        ...(header.shortNames ? { shortNames: [...header.shortNames] } : {}),
        ...(header.categories ? { categories: [...header.categories] } : {}),
      },
      scope: kind.scope,
      versions: kind.versions.map((schema) => {
        const properties = isObject(schema.openAPIV3Schema["properties"])
          ? schema.openAPIV3Schema["properties"]
          : {};
        return {
          name: schema.header.version,
          served: schema.header.served ?? true,
          storage: schema === storage,
          ...("status" in properties ? { subresources: { status: {} } } : {}),
          additionalPrinterColumns: printerColumns(schema),
          schema: { openAPIV3Schema: schema.openAPIV3Schema },
        };
      }),
      ...(conversion
        ? {
            conversion: {
              strategy: "Webhook",
              webhook: {
                conversionReviewVersions: ["v1"],
                clientConfig: {
                  service: {
                    namespace: conversion.namespace,
                    name: conversion.name,
                    path: conversion.path,
                    port: 443,
                  },
                },
              },
            },
          }
        : {}),
    },
  };
}
