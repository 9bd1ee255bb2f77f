import { strict as assert } from "node:assert";
import { KubeConfig, type V1ConfigMap, type V1Pod } from "@kubernetes/client-node";
import { KubeListerWatcher } from "../src/index.js";
import {
  ConfigMaps,
  CustomResourceDefinitions,
  Deployments,
  Leases,
  Namespaces,
  Pods,
  collectionPath,
  defineResource,
  describeResource,
  ResourceDefinitionError,
  type KubeObject,
  type Resource,
  type ResourceSpec,
} from "@tessera/client";

/** True when X and Y are the same type (not merely assignable to each other). */
type Equals<X, Y> = (<T>() => T extends X ? 1 : 2) extends <T>() => T extends Y ? 1 : 2 ? true : false;

// Compile-time checks: this file does not build if they fail.

// A pod handle is not a config map handle, although V1Pod and V1ConfigMap are assignable to each other.
// @ts-expect-error Resource<V1Pod> is not a Resource<V1ConfigMap>
export const podsAsConfigMaps: Resource<V1ConfigMap> = Pods;
// @ts-expect-error nor the other way round
export const configMapsAsPods: Resource<V1Pod> = ConfigMaps;
// Every handle is a Resource (of KubeObject), for code that takes any resource.
export const anyResource: Resource = Pods;
// The object type follows the handle.
export const podsType: Equals<typeof Pods, Resource<V1Pod>> = true;
export const listerWatcherType: Equals<
  KubeListerWatcher<V1ConfigMap>,
  InstanceType<typeof KubeListerWatcher<V1ConfigMap>>
> = true;
export function listerWatcherOf(kc: KubeConfig): void {
  const lw = new KubeListerWatcher(kc, ConfigMaps);
  const inferred: Equals<typeof lw, KubeListerWatcher<V1ConfigMap>> = true;
  // @ts-expect-error a config map lister-watcher does not list pods
  const pods: KubeListerWatcher<V1Pod> = lw;
  void [inferred, pods];
}

const widgetSpec: ResourceSpec = {
  group: "example.com",
  version: "v1alpha1",
  kind: "Widget",
  plural: "widgets",
  scope: "Namespaced",
};

/** The message of the ResourceDefinitionError `defineResource(spec)` throws. */
function problemsOf(spec: unknown): string {
  try {
    defineResource(spec as ResourceSpec);
  } catch (err) {
    assert.ok(err instanceof ResourceDefinitionError, String(err));
    assert.ok(err instanceof TypeError, "a mistake in the program");
    return err.message;
  }
  assert.fail("defineResource accepted an invalid spec");
}

describe("resources", () => {
  it("derives apiVersion and freezes the handle", () => {
    const widgets = defineResource<KubeObject>(widgetSpec);
    assert.deepEqual({ ...widgets }, { ...widgetSpec, apiVersion: "example.com/v1alpha1" });
    assert.ok(Object.isFrozen(widgets));
    assert.throws(() => {
      (widgets as { plural: string }).plural = "gadgets";
    }, TypeError);
    assert.equal(defineResource({ ...widgetSpec, group: "" }).apiVersion, "v1alpha1");
  });

  it("has ready handles for built-in resources", () => {
    assert.deepEqual(
      [ConfigMaps, Namespaces, Deployments, Leases, CustomResourceDefinitions].map((r) => [
        r.apiVersion,
        r.kind,
        r.plural,
        r.scope,
      ]),
      [
        ["v1", "ConfigMap", "configmaps", "Namespaced"],
        ["v1", "Namespace", "namespaces", "Cluster"],
        ["apps/v1", "Deployment", "deployments", "Namespaced"],
        ["coordination.k8s.io/v1", "Lease", "leases", "Namespaced"],
        ["apiextensions.k8s.io/v1", "CustomResourceDefinition", "customresourcedefinitions", "Cluster"],
      ],
    );
    assert.equal(describeResource(Deployments), "deployments.apps");
    assert.equal(collectionPath(Pods, "default"), "/api/v1/namespaces/default/pods");
    assert.equal(collectionPath(Namespaces, "default"), "/api/v1/namespaces");
  });

  it("rejects a spec that cannot name a resource, saying what is wrong and how to fix it", () => {
    assert.match(
      problemsOf({ ...widgetSpec, kind: "" }),
      /^defineResource\(widgets\.example\.com\): kind must be a non-empty string/,
    );
    assert.match(problemsOf({ ...widgetSpec, kind: "widget" }), /kind "widget" must be PascalCase/);
    assert.match(
      problemsOf({ ...widgetSpec, plural: "Widgets" }),
      /plural "Widgets" must be lowercase, as in the URL path \(e\.g\. "widgets"\)/,
    );
    assert.match(problemsOf({ ...widgetSpec, plural: "" }), /plural must be a non-empty string/);
    assert.match(
      problemsOf({ ...widgetSpec, scope: "namespaced" }),
      /scope must be "Namespaced" or "Cluster" \(got "namespaced"\)/,
    );
    assert.match(problemsOf({ ...widgetSpec, group: "apps/v1" }), /give the group and the version apart/);
    assert.match(problemsOf({ ...widgetSpec, group: "Example.com" }), /must be a lowercase DNS name/);
    assert.match(
      problemsOf({ ...widgetSpec, version: "" }),
      /version must be a non-empty string such as "v1"/,
    );
    assert.match(problemsOf({ ...widgetSpec, version: "V1" }), /version "V1" must be lowercase/);
    const { scope: _scope, ...old } = widgetSpec;
    assert.match(
      problemsOf({ ...old, namespaced: true }),
      /there is no "namespaced" field: say scope: "Namespaced"/,
    );
    assert.match(problemsOf({ ...widgetSpec, listKind: "WidgetList" }), /unknown field "listKind"/);
    assert.match(problemsOf(undefined), /must be an object/);
    // Every problem at once, so one run tells all there is to fix.
    assert.equal(problemsOf({ ...widgetSpec, kind: "", plural: "Widgets" }).split("; ").length, 2);
  });

  it("refuses to list something that is not a handle, such as an old descriptor", () => {
    const kc = new KubeConfig();
    const descriptor = { group: "", version: "v1", plural: "configmaps", namespaced: true };
    assert.throws(
      () => new KubeListerWatcher(kc, descriptor as unknown as Resource, { namespace: "default" }),
      (err: unknown) =>
        err instanceof ResourceDefinitionError &&
        /^KubeListerWatcher needs a Resource handle/.test(err.message) &&
        /defineResource\(\)/.test(err.message),
    );
    assert.equal(new KubeListerWatcher(kc, ConfigMaps, { namespace: "default" }).namespace, "default");
  });
});
