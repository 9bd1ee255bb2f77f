import type { KubeObject, Resource } from "@tessera/client";
import { CONVERSION_WEBHOOK_PATH, type ConversionWebhookDefinition } from "./webhook-definition.js";

/** How one version (a spoke) converts to the hub version and back: functions over the generated types. */
export interface SpokeConversion<Spoke extends KubeObject, Hub extends KubeObject> {
  /** The spoke object as the hub version; Tessera sets its `apiVersion` and keeps its metadata. */
  toHub(object: Spoke): Hub;
  /** The hub object as the spoke version; Tessera sets its `apiVersion` and keeps its metadata. */
  fromHub(object: Hub): Spoke;
}

/** The spokes of a conversion, by version name: `{ v1alpha1: { toHub, fromHub } }`. */
export type SpokeConversions<Hub extends KubeObject, Spokes extends Record<string, KubeObject>> = {
  readonly [V in keyof Spokes]: SpokeConversion<Spokes[V], Hub>;
};

/**
 * A kind's conversion between its versions, kubebuilder's hub and spokes:
 * every version converts to and from the hub, so n versions need 2(n-1)
 * functions, not n(n-1). Made by {@link defineConversion}, registered with
 * `manager.register(conversion)`, served at `/convert`.
 */
export interface Conversion<Hub extends KubeObject = KubeObject> {
  readonly hub: Resource<Hub>;
  readonly spokes: Readonly<Record<string, SpokeConversion<KubeObject, Hub>>>;
  /** What `tessera generate` writes into the CRD's `spec.conversion`. */
  readonly definition: ConversionWebhookDefinition;
}

/**
 * The conversion of `hub`'s kind between the hub version (the handle's own
 * version) and each spoke version:
 *
 * ```ts
 * export const widgetConversion = defineConversion(Widgets, {
 *   v1alpha1: {
 *     toHub: (old: WidgetV1alpha1): Widget => ({ ...old, spec: { replicas: old.spec.size } }),
 *     fromHub: (widget: Widget): WidgetV1alpha1 => ({ ...widget, spec: { size: widget.spec.replicas } }),
 *   },
 * });
 * manager.register(widgetConversion);
 * ```
 *
 * Throws a TypeError when a spoke is named as the hub's own version, or is
 * not a version name, or lacks a function.
 */
export function defineConversion<Hub extends KubeObject, Spokes extends Record<string, KubeObject>>(
  hub: Resource<Hub>,
  spokes: SpokeConversions<Hub, Spokes>,
): Conversion<Hub> {
  const versions = Object.keys(spokes);
  const where = `defineConversion(${hub.kind})`;
  if (versions.length === 0) {
    throw new TypeError(
      `${where}: no spoke version; give { <version>: { toHub, fromHub } } for each other version`,
    );
  }
  for (const version of versions) {
    if (version === hub.version) {
      throw new TypeError(`${where}: ${version} is the hub's own version; list only the other versions`);
    }
    if (!/^v[0-9]+((alpha|beta)[0-9]+)?$/.test(version)) {
      throw new TypeError(`${where}: "${version}" is not a Kubernetes version name (v1, v2beta1, v1alpha1)`);
    }
    const spoke = spokes[version] as Partial<SpokeConversion<KubeObject, Hub>> | undefined;
    if (typeof spoke?.toHub !== "function" || typeof spoke.fromHub !== "function") {
      throw new TypeError(`${where}: ${version} needs both toHub and fromHub functions`);
    }
  }
  return Object.freeze({
    hub,
    spokes,
    definition: Object.freeze({
      type: "conversion",
      group: hub.group,
      plural: hub.plural,
      kind: hub.kind,
      hubVersion: hub.version,
      spokeVersions: Object.freeze([...versions]),
      path: CONVERSION_WEBHOOK_PATH,
    }),
  });
}

/** Whether `value` is a {@link Conversion} (what `manager.register` tells from a class). */
export function isConversion(value: unknown): value is Conversion {
  if (value === null || typeof value !== "object") return false;
  const definition = (value as { definition?: { type?: unknown } }).definition;
  return definition?.type === "conversion" && "spokes" in value && "hub" in value;
}

/** A conversion of any kind, as `manager.register` takes it (its functions' types are the hub's and spokes' own). */
export type AnyConversion = Pick<Conversion, "definition">;
