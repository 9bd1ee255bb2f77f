import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import type { ControlPlane } from "./control-plane.js";

interface Crd {
  kind?: string;
  metadata?: { name?: string };
  status?: { conditions?: { type: string; status: string; message?: string }[] };
}

/** What {@link simpleCrd} needs to know. */
export interface SimpleCrdOptions {
  group: string;
  kind: string;
  /** Default `v1`. */
  version?: string;
  /** Default the lower-case kind plus `s`. */
  plural?: string;
  /** Default `Namespaced`. */
  scope?: "Namespaced" | "Cluster";
  /** Default: any object (`x-kubernetes-preserve-unknown-fields`). */
  schema?: Record<string, unknown>;
  /** Serve the status subresource. */
  status?: boolean;
}

/**
 * A CustomResourceDefinition with one served, stored version, for tests that
 * need a kind and nothing particular about it; install it with
 * {@link installCrds}.
 *
 * ```ts
 * await installCrds(env.cp, simpleCrd({ group: "example.com", kind: "Widget" }));
 * ```
 */
export function simpleCrd(options: SimpleCrdOptions): Record<string, unknown> {
  const plural = options.plural ?? `${options.kind.toLowerCase()}s`;
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${options.group}` },
    spec: {
      group: options.group,
      names: {
        kind: options.kind,
        plural,
        singular: options.kind.toLowerCase(),
        listKind: `${options.kind}List`,
      },
      scope: options.scope ?? "Namespaced",
      versions: [
        {
          name: options.version ?? "v1",
          served: true,
          storage: true,
          ...(options.status ? { subresources: { status: {} } } : {}),
          schema: {
            openAPIV3Schema: options.schema ?? {
              type: "object",
              "x-kubernetes-preserve-unknown-fields": true,
            },
          },
        },
      ],
    },
  };
}

/**
 * Installs CustomResourceDefinitions, given as objects or as YAML or JSON files
 * (directories are read for `*.yaml`, `*.yml` and `*.json`, kustomization
 * files skipped),
 * creating or replacing each, and waits until every one is Established, so
 * its kind can be used at once. When the control plane's
 * kube-controller-manager runs, it is restarted, because its garbage
 * collector rediscovers kinds only every 30 s (the `crds` option of
 * `ControlPlane` installs them before it starts instead). Returns their
 * names. Documents of other kinds are refused: this is for CRDs, as
 * envtest's `CRDDirectoryPaths` is.
 *
 * ```ts
 * await installCrds(env.cp, "deploy/base/crds");
 * ```
 */
export async function installCrds(
  cp: ControlPlane,
  ...sources: (string | Record<string, unknown>)[]
): Promise<string[]> {
  const crds: Crd[] = sources.filter((s): s is Record<string, unknown> => typeof s !== "string");
  const paths = sources.filter((s): s is string => typeof s === "string");
  for (const file of paths.flatMap(expand)) {
    for (const doc of parseAllDocuments(readFileSync(file, "utf8"))) {
      if (doc.errors.length) throw new Error(`installCrds: ${file}: ${doc.errors[0]!.message}`);
      const crd = doc.toJS() as Crd | null;
      if (!crd) continue;
      if (crd.kind !== "CustomResourceDefinition" || !crd.metadata?.name) {
        throw new Error(
          `installCrds: ${file} holds a ${crd.kind ?? "document without a kind"}; only CustomResourceDefinitions`,
        );
      }
      crds.push(crd);
    }
  }
  const base = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
  for (const crd of crds) {
    const name = crd.metadata!.name!;
    const headers = { "content-type": "application/apply-patch+yaml" };
    const res = await cp.raw(`${base}/${name}?fieldManager=tessera-testenv&force=true`, {
      method: "PATCH",
      body: JSON.stringify(crd),
      headers,
    });
    if (res.status !== 200 && res.status !== 201) {
      throw new Error(
        `installCrds: apply CustomResourceDefinition ${name}: HTTP ${res.status}: ${message(res.body)}`,
      );
    }
  }
  const deadline = Date.now() + 30_000;
  for (const crd of crds) {
    const name = crd.metadata!.name!;
    for (;;) {
      const res = await cp.raw(`${base}/${name}`);
      const got = JSON.parse(res.body) as Crd;
      const established = got.status?.conditions?.find((c) => c.type === "Established");
      if (established?.status === "True") break;
      if (Date.now() > deadline) {
        const why = got.status?.conditions?.map(
          (c) => `${c.type}=${c.status}${c.message ? ` (${c.message})` : ""}`,
        );
        throw new Error(
          `installCrds: ${name} not Established within 30 s: ${why?.join(", ") ?? "no conditions"}`,
        );
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  if (crds.length && cp.controllerManagerRunning) await cp.restartControllerManager();
  return crds.map((c) => c.metadata!.name!);
}

function expand(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .filter((f) => /\.(ya?ml|json)$/.test(f) && !/^kustomization\.ya?ml$/.test(f))
    .sort()
    .map((f) => join(path, f));
}

function message(body: string): string {
  try {
    return (JSON.parse(body) as { message?: string }).message ?? body.slice(0, 300);
  } catch {
    return body.slice(0, 300);
  }
}
