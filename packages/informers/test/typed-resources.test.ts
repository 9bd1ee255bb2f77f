import { strict as assert } from "node:assert";
import { KubeConfig, type V1ConfigMap, type V1Pod, type V1Secret } from "@kubernetes/client-node";
import { KubeListerWatcher } from "@tessera/reflector";
import {
  ConfigMaps,
  defineResource,
  Namespaces,
  Pods,
  ResourceDefinitionError,
  Secrets,
  type KubeObject,
  type Resource,
} from "@tessera/client";
import {
  MetadataListerWatcher,
  metadataResource,
  SharedIndexInformer,
  SharedInformerFactory,
  type PartialObjectMetadata,
} from "../src/index.js";

/** True when X and Y are the same type (not merely assignable to each other). */
type Equals<X, Y> = (<T>() => T extends X ? 1 : 2) extends <T>() => T extends Y ? 1 : 2 ? true : false;

/** A cluster nobody talks to: informers are made, never run, so no request is sent. */
function offlineKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "c", server: "https://127.0.0.1:1" }],
    users: [{ name: "u" }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x",
  });
  return kc;
}

// Compile-time checks: this file does not build if one fails.
export function compileTimeChecks(factory: SharedInformerFactory, kc: KubeConfig): void {
  // The object type comes from the handle, with no type argument.
  const configMaps = factory.informerFor(ConfigMaps);
  const exact: Equals<typeof configMaps, SharedIndexInformer<V1ConfigMap>> = true;
  const withOptions = factory.informerFor(ConfigMaps, { namespace: "default", indexers: {} });
  const exactWithOptions: Equals<typeof withOptions, SharedIndexInformer<V1ConfigMap>> = true;
  const metadata = factory.metadataInformerFor(Secrets);
  const exactMetadata: Equals<typeof metadata, SharedIndexInformer<PartialObjectMetadata>> = true;
  // A pod informer is not a config map informer, although V1Pod and V1ConfigMap are assignable to each other.
  // @ts-expect-error SharedIndexInformer<V1Pod> is not a SharedIndexInformer<V1ConfigMap>
  const cms: SharedIndexInformer<V1ConfigMap> = factory.informerFor(Pods);
  // @ts-expect-error nor is a secret informer a pod informer
  const pods: SharedIndexInformer<V1Pod> = factory.informerFor(Secrets);
  // An informer over a lister-watcher takes the lister-watcher's type, and so its handle's.
  const own = new SharedIndexInformer({ listerWatcher: new KubeListerWatcher(kc, Secrets) });
  const exactOwn: Equals<typeof own, SharedIndexInformer<V1Secret>> = true;
  const meta = new MetadataListerWatcher(kc, Secrets);
  const exactMeta: Equals<typeof meta.handle, Resource<PartialObjectMetadata>> = true;
  // The options are typed by the handle (they do not take part in the inference).
  factory.informerFor(ConfigMaps, {
    transform: (cm) => {
      // @ts-expect-error the transform is handed a V1ConfigMap, which has no spec
      void cm.spec;
      return cm;
    },
  });
  // Any informer is an informer of KubeObject, for code that handles every kind.
  const anyInformer: SharedIndexInformer<KubeObject> = configMaps;
  void [configMaps, withOptions, metadata, own, meta];
  void [exact, exactWithOptions, exactMetadata, cms, pods, exactOwn, exactMeta, anyInformer];
}

describe("typed resources", () => {
  it("hands an informer the typed handle it was asked for, metadata-only ones as PartialObjectMetadata", () => {
    const factory = new SharedInformerFactory({ kubeConfig: offlineKubeConfig() });
    const configMaps = factory.informerFor(ConfigMaps, { namespace: "default" });
    assert.equal(configMaps.handle, ConfigMaps);
    assert.equal(configMaps.resource, "configmaps");
    assert.equal(configMaps.namespace, "default");
    const namespaces = factory.informerFor(Namespaces, { namespace: "ignored" });
    assert.equal(namespaces.handle?.kind, "Namespace");
    assert.equal(namespaces.namespace, undefined, "a cluster-scoped resource has no namespace");
    const secretNames = factory.metadataInformerFor(Secrets);
    assert.equal(secretNames.handle, metadataResource(Secrets));
    assert.deepEqual(
      { ...secretNames.handle },
      { group: "", version: "v1", kind: "Secret", plural: "secrets", scope: "Namespaced", apiVersion: "v1" },
    );
  });

  it("takes the handle from the options, or else from the lister-watcher", () => {
    const kc = offlineKubeConfig();
    const widgets = defineResource({
      group: "example.com",
      version: "v1",
      kind: "Widget",
      plural: "widgets",
      scope: "Namespaced",
    });
    const fromListerWatcher = new SharedIndexInformer({ listerWatcher: new KubeListerWatcher(kc, widgets) });
    assert.equal(fromListerWatcher.handle, widgets);
    assert.equal(fromListerWatcher.resource, "widgets.example.com");
    const bare = {
      resource: "widgets.example.com",
      list: () => Promise.reject(new Error("no")),
      watch: () => Promise.reject(new Error("no")),
    };
    assert.equal(new SharedIndexInformer({ listerWatcher: bare }).handle, undefined);
    assert.equal(new SharedIndexInformer({ listerWatcher: bare, handle: widgets }).handle, widgets);
  });

  it("refuses a custom resource's spec that cannot name a resource", () => {
    assert.throws(
      () =>
        defineResource({
          group: "example.com",
          version: "v1",
          kind: "",
          plural: "Widgets",
          scope: "Namespaced",
        }),
      (err: unknown) =>
        err instanceof ResourceDefinitionError &&
        /kind must be a non-empty string/.test(err.message) &&
        /plural "Widgets" must be lowercase/.test(err.message),
    );
  });
});
