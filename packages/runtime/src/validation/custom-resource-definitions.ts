import { defineResource, type KubeObject, parseYaml } from "@tessera/client";
import type { CustomResourceDefinitionLike } from "./crd-schema-validator.js";
import { nodeFs } from "@tessera/core";

/** A CustomResourceDefinition as the validators read it, and as a KubeObject. */
export type CustomResourceDefinition = KubeObject & CustomResourceDefinitionLike;

/** The handle of `apiextensions.k8s.io/v1` CustomResourceDefinitions, to read a CRD from the server (or the cache). */
export const CustomResourceDefinitions = defineResource<CustomResourceDefinition>({
  group: "apiextensions.k8s.io",
  version: "v1",
  kind: "CustomResourceDefinition",
  plural: "customresourcedefinitions",
  scope: "Cluster",
});

/**
 * The CustomResourceDefinition in a YAML or JSON file (the one an operator
 * ships); with several documents, the one named `name`, else the first CRD.
 * Throws naming the file when there is none.
 *
 * ```ts
 * const validator = new CrdSchemaValidators().for(readCrdFile("config/crd/bases.yaml", "gadgets.example.com"), "v1");
 * ```
 */
export function readCrdFile(file: string, name?: string): CustomResourceDefinition {
  const text = nodeFs.readFileSync(file, "utf8");
  const docs = text.split(/^---\s*$/m).map((d) => parseYaml(d) as Partial<CustomResourceDefinition> | null);
  const crd = docs.find(
    (d) => d?.kind === "CustomResourceDefinition" && (name === undefined || d.metadata?.name === name),
  );
  if (!crd?.spec?.versions) {
    throw new TypeError(
      `${file}: no CustomResourceDefinition${name ? ` named ${name}` : ""} with spec.versions in it`,
    );
  }
  return crd as CustomResourceDefinition;
}
