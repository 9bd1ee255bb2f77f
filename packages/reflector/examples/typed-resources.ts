import { KubeConfig } from "@kubernetes/client-node";
import { KubeListerWatcher } from "@tessera/reflector";
import { defineResource, Deployments, type KubeObject } from "@tessera/client";

/** A custom resource's objects, as its CRD's schema has them. */
interface Widget extends KubeObject {
  spec?: { size: number };
}

// Checked now: a plural or group the API server would refuse throws here, not as a 404 later.
export const Widgets = defineResource<Widget>({
  group: "example.com",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  scope: "Namespaced",
});

const kc = new KubeConfig();
kc.loadFromDefault();

// KubeListerWatcher<Widget> and KubeListerWatcher<V1Deployment>: the object type comes from the handle.
const widgets = new KubeListerWatcher(kc, Widgets, { namespace: "default" });
const deployments = new KubeListerWatcher(kc, Deployments, { namespace: "default" });

const page = await widgets.list({ limit: 100 });
for (const widget of page.items) console.log(widget.metadata?.name, widget.spec?.size);
const [first] = (await deployments.list({ limit: 1 })).items;
console.log(first?.spec?.replicas);

// An owner reference needs the owner's apiVersion and kind: the handle has them.
const [owner] = page.items;
export const ownerReference = owner && {
  apiVersion: Widgets.apiVersion, // "example.com/v1"
  kind: Widgets.kind,
  name: owner.metadata?.name ?? "",
  uid: owner.metadata?.uid ?? "",
  controller: true,
};
