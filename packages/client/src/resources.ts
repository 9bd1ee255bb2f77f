import type {
  CoreV1Event,
  V1ConfigMap,
  V1CustomResourceDefinition,
  V1DaemonSet,
  V1Deployment,
  V1Job,
  V1Lease,
  V1Namespace,
  V1Pod,
  V1Secret,
  V1Service,
  V1ServiceAccount,
  V1StatefulSet,
} from "@kubernetes/client-node";
import { defineResource } from "./resource.js";

// Ready handles for the built-in resources operators use most, typed with
// @kubernetes/client-node's models. Objects are kept as the plain JSON the
// server sent: the models' `Date` fields (timestamps) hold strings at runtime.

/** `v1` ConfigMaps (`/api/v1/configmaps`). */
export const ConfigMaps = defineResource<V1ConfigMap>({
  group: "",
  version: "v1",
  kind: "ConfigMap",
  plural: "configmaps",
  scope: "Namespaced",
});

/** `v1` Secrets (`/api/v1/secrets`). */
export const Secrets = defineResource<V1Secret>({
  group: "",
  version: "v1",
  kind: "Secret",
  plural: "secrets",
  scope: "Namespaced",
});

/** `v1` Services (`/api/v1/services`). */
export const Services = defineResource<V1Service>({
  group: "",
  version: "v1",
  kind: "Service",
  plural: "services",
  scope: "Namespaced",
});

/** `v1` ServiceAccounts (`/api/v1/serviceaccounts`). */
export const ServiceAccounts = defineResource<V1ServiceAccount>({
  group: "",
  version: "v1",
  kind: "ServiceAccount",
  plural: "serviceaccounts",
  scope: "Namespaced",
});

/** `v1` Namespaces (`/api/v1/namespaces`), cluster-scoped. */
export const Namespaces = defineResource<V1Namespace>({
  group: "",
  version: "v1",
  kind: "Namespace",
  plural: "namespaces",
  scope: "Cluster",
});

/** `v1` Pods (`/api/v1/pods`). */
export const Pods = defineResource<V1Pod>({
  group: "",
  version: "v1",
  kind: "Pod",
  plural: "pods",
  scope: "Namespaced",
});

/** `v1` Events of the core group (`/api/v1/events`), client-node's `CoreV1Event`. */
export const Events = defineResource<CoreV1Event>({
  group: "",
  version: "v1",
  kind: "Event",
  plural: "events",
  scope: "Namespaced",
});

/** `apps/v1` Deployments. */
export const Deployments = defineResource<V1Deployment>({
  group: "apps",
  version: "v1",
  kind: "Deployment",
  plural: "deployments",
  scope: "Namespaced",
});

/** `apps/v1` StatefulSets. */
export const StatefulSets = defineResource<V1StatefulSet>({
  group: "apps",
  version: "v1",
  kind: "StatefulSet",
  plural: "statefulsets",
  scope: "Namespaced",
});

/** `apps/v1` DaemonSets. */
export const DaemonSets = defineResource<V1DaemonSet>({
  group: "apps",
  version: "v1",
  kind: "DaemonSet",
  plural: "daemonsets",
  scope: "Namespaced",
});

/** `batch/v1` Jobs. */
export const Jobs = defineResource<V1Job>({
  group: "batch",
  version: "v1",
  kind: "Job",
  plural: "jobs",
  scope: "Namespaced",
});

/** `coordination.k8s.io/v1` Leases. */
export const Leases = defineResource<V1Lease>({
  group: "coordination.k8s.io",
  version: "v1",
  kind: "Lease",
  plural: "leases",
  scope: "Namespaced",
});

/** `apiextensions.k8s.io/v1` CustomResourceDefinitions, cluster-scoped. */
export const CustomResourceDefinitions = defineResource<V1CustomResourceDefinition>({
  group: "apiextensions.k8s.io",
  version: "v1",
  kind: "CustomResourceDefinition",
  plural: "customresourcedefinitions",
  scope: "Cluster",
});
