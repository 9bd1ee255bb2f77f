/**
 * @tessera/testenv: a real etcd and kube-apiserver for tests, started on
 * loopback in seconds with no Docker, a real kube-controller-manager on
 * request (garbage collection, namespaces, workloads), a stand-in for the
 * kubelet's Pod status, webhooks served by the test process (`installWebhooks`),
 * and a fault proxy that breaks the connection between a client and the API
 * server on purpose.
 */
export { ControlPlane, ControlPlaneStartError, defaultControllers } from "./control-plane.js";
export type { ControlPlaneOptions, ControllerManagerOptions, RawResponse } from "./control-plane.js";
export { markPodReady, markPodsReady } from "./kubelet.js";
export { installCrds, simpleCrd } from "./crds.js";
export type { SimpleCrdOptions } from "./crds.js";
export type { MarkPodReadyOptions } from "./kubelet.js";
export { FaultProxy } from "./fault-proxy.js";
export type { FaultProxyStats } from "./fault-proxy.js";
export {
  resolveControlPlaneBinaries,
  buildScriptPath,
  ControlPlaneBinariesNotFoundError,
} from "./binaries.js";
export type { ControlPlaneBinaries, ResolveOptions } from "./binaries.js";
export { generateControlPlaneCertificates, generateServingCertificates } from "./certificates.js";
export type { ControlPlaneCertificates, CertificateFiles, ServingCertificates } from "./certificates.js";
export { installWebhooks } from "./webhooks.js";
export type { InstalledWebhooks, LocalWebhook, WebhookInstallOptions, WebhookRule } from "./webhooks.js";
export { freePort } from "./free-port.js";
export { writeServiceAccount } from "./service-account.js";
export type { ServiceAccountCredentials, ServiceAccountOptions } from "./service-account.js";
export { eventually } from "./eventually.js";
export { parsePrometheusText, sumSamples } from "./prometheus-text.js";
export type { PrometheusFamily, PrometheusSample } from "./prometheus-text.js";
export { kubeConfigVia } from "./kubeconfig-via.js";
export { useControlPlane } from "./mocha-fixture.js";
