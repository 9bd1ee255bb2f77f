// A kind with two versions for the conversion tests: v1alpha1 (stored) has a
// flat spec, v1 (the hub) groups the same fields under `workload` and
// renames `size` to `replicas`. Both directions lose nothing, which the
// round-trip property checks and the API server tests rely on.
import { defineConversion, defineResource, type KubeObject } from "../../src/index.js";

export interface TankV1alpha1 extends KubeObject {
  spec?: { size?: number; image?: string; labels?: Record<string, string> };
}

export interface TankV1 extends KubeObject {
  spec?: { workload?: { replicas?: number; image?: string }; labels?: Record<string, string> };
}

export const GROUP = "conversion.example.com";

export const TanksV1 = defineResource<TankV1>({
  group: GROUP,
  version: "v1",
  kind: "Tank",
  plural: "tanks",
  scope: "Namespaced",
});

export const TanksV1alpha1 = defineResource<TankV1alpha1>({
  group: GROUP,
  version: "v1alpha1",
  kind: "Tank",
  plural: "tanks",
  scope: "Namespaced",
});

/** v1alpha1 → v1. */
export function tankToHub(old: TankV1alpha1): TankV1 {
  const { spec, ...rest } = old;
  if (!spec) return rest;
  const { size, image, ...others } = spec;
  const workload = {
    ...(size !== undefined ? { replicas: size } : {}),
    ...(image !== undefined ? { image } : {}),
  };
  return { ...rest, spec: { ...others, ...(Object.keys(workload).length > 0 ? { workload } : {}) } };
}

/** v1 → v1alpha1. */
export function tankFromHub(tank: TankV1): TankV1alpha1 {
  const { spec, ...rest } = tank;
  if (!spec) return rest;
  const { workload, ...others } = spec;
  return {
    ...rest,
    spec: {
      ...others,
      ...(workload?.replicas !== undefined ? { size: workload.replicas } : {}),
      ...(workload?.image !== undefined ? { image: workload.image } : {}),
    },
  };
}

export const tankConversion = defineConversion(TanksV1, {
  v1alpha1: { toHub: tankToHub, fromHub: tankFromHub },
});

const spec = (properties: Record<string, unknown>) => ({
  type: "object",
  properties: { spec: { type: "object", properties } },
});
const labels = { type: "object", additionalProperties: { type: "string" } };

/** The CRD: v1alpha1 stored, both served; conversion is set to the test's webhook by installWebhooks. */
export const tankCrd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `tanks.${GROUP}` },
  spec: {
    group: GROUP,
    names: { kind: "Tank", plural: "tanks", singular: "tank", listKind: "TankList" },
    scope: "Namespaced",
    versions: [
      {
        name: "v1alpha1",
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: spec({ size: { type: "integer" }, image: { type: "string" }, labels }),
        },
      },
      {
        name: "v1",
        served: true,
        storage: false,
        schema: {
          openAPIV3Schema: spec({
            workload: {
              type: "object",
              properties: { replicas: { type: "integer" }, image: { type: "string" } },
            },
            labels,
          }),
        },
      },
    ],
  },
};
