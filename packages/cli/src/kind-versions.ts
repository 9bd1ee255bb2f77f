import { CliError } from "./cli-error.js";
import type { KindNames } from "./names.js";
import { versionInFileName, type KindSchema } from "./schema-file.js";

/** One kind with every version its schema files define: what one CRD holds. */
export interface ApiKind {
  readonly group: string;
  readonly names: KindNames;
  readonly scope: "Namespaced" | "Cluster";
  /** Every version, in the API server's priority order (v1, v1beta1, v1alpha1). */
  readonly versions: readonly KindSchema[];
  /**
   * The version the API server stores: the one marked `"storage": true`, or
   * the kind's only version. It is the hub the other versions convert
   * through, and generated code names it without a version suffix.
   */
  readonly storage: KindSchema;
}

/** What generated code calls one version of a kind. */
export interface VersionNames {
  /** `Widget` for the storage version, `WidgetV1alpha1` for another. */
  readonly type: string;
  /** The resource handle: `Widgets`, `WidgetsV1alpha1`. */
  readonly handle: string;
  /** `widgetValidator`, `widgetV1alpha1Validator`. */
  readonly validator: string;
  /** The module under `src/generated/`, without `.ts`: `widget`, `widget.v1alpha1`. */
  readonly module: string;
}

/**
 * The names of `version`'s generated type, handle, validator and module: the
 * storage version's are the kind's own (`Widget`, `Widgets`), so code written
 * against the kind keeps compiling when a version is added; another version's
 * carry its version (`WidgetV1alpha1`, `WidgetsV1alpha1`).
 */
export function versionNames(kind: ApiKind, version: KindSchema): VersionNames {
  const { names } = kind;
  const v = version.header.version;
  if (version === kind.storage) {
    return {
      type: names.kind,
      handle: names.handle,
      validator: `${names.singular}Validator`,
      module: names.singular,
    };
  }
  const suffix = v.charAt(0).toUpperCase() + v.slice(1);
  return {
    type: `${names.kind}${suffix}`,
    handle: `${names.handle}${suffix}`,
    validator: `${names.singular}${suffix}Validator`,
    module: `${names.singular}.${v}`,
  };
}

/**
 * Puts the schema files of each kind together (by `<plural>.<group>`, the
 * CRD's name) and checks what a CRD needs of them: one file per version, the
 * names, scope, short names and categories the same in each, and exactly one
 * version marked `"storage": true` when there are several. A kind with several
 * versions keeps each in `schemas/<kind>.<version>.schema.json`.
 */
export function groupKindVersions(schemas: readonly KindSchema[]): ApiKind[] {
  const byCrd = new Map<string, KindSchema[]>();
  for (const s of schemas) {
    const key = `${s.names.plural}.${s.header.group}`;
    byCrd.set(key, [...(byCrd.get(key) ?? []), s]);
  }
  const kinds: ApiKind[] = [];
  for (const [crd, files] of byCrd) {
    const versions = [...files].sort((a, b) => compareVersions(a.header.version, b.header.version));
    const first = versions[0]!;
    for (const other of versions.slice(1)) {
      const same = versions.find((v) => v !== other && v.header.version === other.header.version);
      if (same) {
        throw new CliError(
          `${same.file} and ${other.file} both define version ${other.header.version} of ${crd}; ` +
            `one file per version (schemas/<kind>.<version>.schema.json)`,
        );
      }
      for (const key of ["kind", "scope", "shortNames", "categories"] as const) {
        const a = JSON.stringify(first.header[key] ?? null);
        const b = JSON.stringify(other.header[key] ?? null);
        if (a !== b) {
          throw new CliError(
            `${first.file} and ${other.file} are versions of ${crd} but disagree on x-tessera.${key} (${a} and ${b}): ` +
              `the CRD has one ${key} for all its versions; make them the same`,
          );
        }
      }
    }
    if (versions.length > 1) {
      const unversioned = versions.find((v) => versionInFileName(v.file) === undefined);
      if (unversioned) {
        throw new CliError(
          `${unversioned.file} is one of ${versions.length} versions of ${crd}: a kind with several versions keeps each ` +
            `in schemas/<kind>.<version>.schema.json; rename it to ` +
            `${first.names.singular}.${unversioned.header.version}.schema.json`,
        );
      }
    }
    const stored = versions.filter((v) => v.header.storage === true);
    const storage = versions.length === 1 && first.header.storage !== false ? first : stored[0];
    if (!storage || stored.length > 1) {
      const list = versions.map((v) => `  ${v.file} (${v.header.version})`).join("\n");
      throw new CliError(
        `${crd} has ${versions.length} versions and ${stored.length === 0 ? "none" : stored.length} marked as stored:\n${list}\n` +
          `Mark exactly one, the version the API server stores (and the hub the others convert through), ` +
          `with "storage": true in its "x-tessera" header, e.g.\n` +
          `  "x-tessera": { "group": "${first.header.group}", "version": "${first.header.version}", "kind": "${first.header.kind}", "storage": true }`,
      );
    }
    kinds.push({
      group: first.header.group,
      names: first.names,
      scope: first.header.scope,
      versions,
      storage,
    });
  }
  return kinds.sort(
    (a, b) => a.names.singular.localeCompare(b.names.singular) || a.group.localeCompare(b.group),
  );
}

/**
 * Kubernetes' version priority, highest first: GA before beta before alpha,
 * then the higher major, then the higher minor (v2, v1, v1beta2, v1beta1,
 * v1alpha1).
 */
export function compareVersions(a: string, b: string): number {
  const rank = (v: string): [number, number, number] => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [3, 0, 0];
    const stability = m[2] === undefined ? 0 : m[2] === "beta" ? 1 : 2;
    return [stability, -Number(m[1]), -Number(m[3] ?? 0)];
  };
  const [x, y] = [rank(a), rank(b)];
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2] || a.localeCompare(b);
}
